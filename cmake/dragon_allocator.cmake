# The memory allocator linked into every program we build. The IR is immutable, so the
# schedule's replays, lowering and the simplifier make and drop millions of small nodes
# (malloc and free were 15% of a tensor-core candidate's sampling under glibc); NVRTC,
# which the tuner runs in forked children of dragon, allocates as heavily. jemalloc's
# per-thread caches make that cheaper (bench/results/2026-12-07-vm-allocator.md).
#   DRAGON_MALLOC=auto      jemalloc where its library is found, else the C library's
#   DRAGON_MALLOC=jemalloc  jemalloc or a configure error
#   DRAGON_MALLOC=system    the C library's malloc
# Sanitizer builds (DRAGON_FUZZ) keep their own allocator.
set(DRAGON_MALLOC "auto" CACHE STRING "Memory allocator: auto, jemalloc or system")
set_property(CACHE DRAGON_MALLOC PROPERTY STRINGS auto jemalloc system)
set(DRAGON_MALLOC_USED "system")
if(DRAGON_FUZZ OR DRAGON_MALLOC STREQUAL "system")
  # nothing to link
elseif(DRAGON_MALLOC STREQUAL "auto" OR DRAGON_MALLOC STREQUAL "jemalloc")
  find_library(DRAGON_JEMALLOC_LIBRARY NAMES jemalloc)
  if(DRAGON_JEMALLOC_LIBRARY)
    # Every target defined after this links it: the programs' malloc and free resolve to
    # jemalloc's before the C library's (ELF symbol interposition), for NVRTC and libtorch too.
    link_libraries(${DRAGON_JEMALLOC_LIBRARY})
    set(DRAGON_MALLOC_USED "jemalloc (${DRAGON_JEMALLOC_LIBRARY})")
  elseif(DRAGON_MALLOC STREQUAL "jemalloc")
    message(FATAL_ERROR "DRAGON_MALLOC=jemalloc, but libjemalloc was not found: on Debian/Ubuntu install "
                        "libjemalloc-dev (scripts/setup.sh does); on the GPU machine scripts/fetch-device-debs.sh "
                        "brings it as .deb files")
  endif()
else()
  message(FATAL_ERROR "DRAGON_MALLOC is '${DRAGON_MALLOC}': use auto, jemalloc or system")
endif()
message(STATUS "Little Dragon: memory allocator: ${DRAGON_MALLOC_USED}")
