# Loaded by the "asan" preset only (CMAKE_PROJECT_INCLUDE in CMakePresets.json), right after
# project(): adds cmake/asan_systemc_fibers.cpp to every executable of the build. It completes
# SystemC 2.3.4's incomplete AddressSanitizer annotation of its QuickThreads coroutine
# switches (see the comment at the top of that file); without it, every exception thrown
# after the first SC_THREAD switch leaves stale stack redzones and ASan reports
# stack-buffer-overflows that do not exist (google/sanitizers#189).
add_library(cdma_asan_systemc_fibers OBJECT ${CMAKE_CURRENT_LIST_DIR}/asan_systemc_fibers.cpp)

function(cdma_asan_add_systemc_fibers dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_sources(${t} PRIVATE $<TARGET_OBJECTS:cdma_asan_systemc_fibers>)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(d IN LISTS subdirs)
    cdma_asan_add_systemc_fibers("${d}")
  endforeach()
endfunction()

# Executables exist only once the whole tree is configured: run at the end of the top level.
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL cdma_asan_add_systemc_fibers "${CMAKE_SOURCE_DIR}")
