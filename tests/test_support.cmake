# Helpers several test programs (and benchmarks) share: each compiled once into a library
# of its own, with what it needs, instead of once per program that uses it.
function(dragon_test_support name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} GTest::gtest)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE DRAGON_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                             DRAGON_BINARY_DIR="${PROJECT_BINARY_DIR}")
endfunction()
dragon_test_support(dragon_test_random_trace SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/schedule/random_trace.cc DEPS dragon_schedule)
dragon_test_support(dragon_test_tensorcore_gemm_sketch SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/schedule/tensorcore_gemm_sketch.cc
                    DEPS dragon_schedule dragon_ops)
dragon_test_support(dragon_test_wgmma_gemm_sketch SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/schedule/wgmma_gemm_sketch.cc
                    DEPS dragon_search dragon_lower dragon_schedule dragon_ops)
dragon_test_support(dragon_test_schedule_util SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/schedule/schedule_test_util.cc
                    DEPS dragon_schedule dragon_interp dragon_ops)
dragon_test_support(dragon_test_lower_util SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/lower/lower_test_util.cc
                    DEPS dragon_lower dragon_interp dragon_ops)
dragon_test_support(dragon_test_pipelined_gemm SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/lower/gpu/pipelined_gemm.cc
                    DEPS dragon_test_tensorcore_gemm_sketch dragon_lower dragon_search dragon_schedule dragon_ops)
dragon_test_support(dragon_test_codegen_util SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/codegen/codegen_test_util.cc
                    DEPS dragon_runtime dragon_interp dragon_ops)
dragon_test_support(dragon_test_default_gpu_schedule SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/codegen/default_gpu_schedule.cc
                    DEPS dragon_search dragon_schedule)
dragon_test_support(dragon_test_harness_util SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/harness/harness_test_util.cc
                    DEPS dragon_harness dragon_runtime dragon_interp dragon_ops)
dragon_test_support(dragon_test_db_util SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/db/db_test_util.cc
                    DEPS dragon_test_random_trace dragon_db dragon_script dragon_ops)
