# dragon_library(NAME SOURCES ... DEPS ...): a static library of one component, with the
# public headers under include/ and dependencies pointing one way (CONVENTIONS.md).
function(dragon_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()
