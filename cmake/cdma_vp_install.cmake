# Install rules of the cdma::tlm package (included at the end of tlm/CMakeLists.txt).
#
#   cmake --install <build> --prefix <prefix>
# installs
#   <prefix>/include/cdma_vp/tlm/**.h                      headers ("tlm/cdma/cdma_engine.h")
#   <prefix>/lib/libcdma_tlm.a                             the library
#   <prefix>/lib/cmake/cdma_vp/cdma_vpConfig.cmake (+ Version, Targets)
#                                                          find_package(cdma_vp) -> cdma::tlm
#   <prefix>/lib/pkgconfig/cdma_vp.pc                      pkg-config --cflags --libs cdma_vp
#   <prefix>/share/doc/cdma_vp/README.md, docs/, examples/ the README, the docs (model pages,
#                                                          user guide, docs/dev logs) and the
#                                                          embedding examples, laid out as in
#                                                          the source tree so links resolve
# Everything is relocatable (paths relative to the installed files).
include(CMakePackageConfigHelpers)

set(CDMA_VP_INSTALL_LIBDIR lib)
set(CDMA_VP_INSTALL_CMAKEDIR ${CDMA_VP_INSTALL_LIBDIR}/cmake/cdma_vp)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/tlm/
        DESTINATION include/cdma_vp/tlm
        COMPONENT cdma_vp_devel
        FILES_MATCHING PATTERN "*.h")
# The documentation an integrator reads (wiring: user-guide.md; registers: cdma_registers.md),
# so that an install alone points to it (integrator trial s21 F8).
# Laid out as in the source tree (README.md, docs/, examples/), so that the pages' relative
# links (user-guide.md -> ../examples/chain/main.cpp, workloads.md -> dev/...) resolve
# (breaker2 s21 F8).
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/cdma_vp COMPONENT cdma_vp_devel)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION share/doc/cdma_vp COMPONENT cdma_vp_devel)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples DESTINATION share/doc/cdma_vp COMPONENT cdma_vp_devel)
install(TARGETS cdma_tlm EXPORT cdma_vp_targets
        ARCHIVE DESTINATION ${CDMA_VP_INSTALL_LIBDIR} COMPONENT cdma_vp_devel
        LIBRARY DESTINATION ${CDMA_VP_INSTALL_LIBDIR} COMPONENT cdma_vp_devel)
install(EXPORT cdma_vp_targets
        NAMESPACE cdma::
        FILE cdma_vpTargets.cmake
        DESTINATION ${CDMA_VP_INSTALL_CMAKEDIR}
        COMPONENT cdma_vp_devel)
# The build tree is a package too, without installing: find_package(cdma_vp) with
# -Dcdma_vp_DIR=<build>/cmake finds the config generated below next to this targets file
# (cdma::tlm then points at <build>/tlm/libcdma_tlm.a and the source tree's headers; the
# config uses no install-relative path). Before session 25 only the config was there, and
# its include() of cdma_vpTargets.cmake failed (trial tlmuser-s25).
export(EXPORT cdma_vp_targets
       NAMESPACE cdma::
       FILE ${PROJECT_BINARY_DIR}/cmake/cdma_vpTargets.cmake)

# Dependencies of cdma_tlm, for the package config (find_dependency / pkg_check_modules) and
# the pkg-config file (Requires). PkgConfig::<P> targets carry their module name in
# <P>_MODULE_NAME; other imported targets <Ns>::<Name> are found with find_dependency(<Ns>).
get_target_property(_cdma_deps cdma_tlm INTERFACE_LINK_LIBRARIES)
set(CDMA_VP_PKGCONFIG_DEPS "")   # "PREFIX=module;..." for the CMake config
set(CDMA_VP_FIND_DEPS "")        # package names for find_dependency()
set(CDMA_VP_PC_REQUIRES "")      # pkg-config module names
set(_cdma_pc_of_package_ZLIB zlib)
set(_cdma_pc_of_package_zstd libzstd)
set(_cdma_pc_of_package_lz4 liblz4)
set(_cdma_pc_of_package_LibLZMA liblzma)
foreach(_dep IN LISTS _cdma_deps)
  if(_dep MATCHES "^PkgConfig::(.+)$")
    set(_p ${CMAKE_MATCH_1})
    if(NOT ${_p}_MODULE_NAME)
      message(FATAL_ERROR "cdma_vp install: no pkg-config module name known for ${_dep}")
    endif()
    list(APPEND CDMA_VP_PKGCONFIG_DEPS "${_p}=${${_p}_MODULE_NAME}")
    list(APPEND CDMA_VP_PC_REQUIRES ${${_p}_MODULE_NAME})
  elseif(_dep MATCHES "^([A-Za-z0-9_]+)::")
    set(_ns ${CMAKE_MATCH_1})
    list(APPEND CDMA_VP_FIND_DEPS ${_ns})
    if(DEFINED _cdma_pc_of_package_${_ns})
      list(APPEND CDMA_VP_PC_REQUIRES ${_cdma_pc_of_package_${_ns}})
    else()
      message(WARNING "cdma_vp install: ${_dep} has no known pkg-config module; "
                      "cdma_vp.pc will not list it")
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES CDMA_VP_FIND_DEPS)
list(REMOVE_DUPLICATES CDMA_VP_PC_REQUIRES)
list(JOIN CDMA_VP_PC_REQUIRES " " CDMA_VP_PC_REQUIRES_STR)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/cdma_vpConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/cdma_vpConfig.cmake
  INSTALL_DESTINATION ${CDMA_VP_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/cdma_vpConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/cdma_vpConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/cdma_vpConfigVersion.cmake
        DESTINATION ${CDMA_VP_INSTALL_CMAKEDIR}
        COMPONENT cdma_vp_devel)

file(RELATIVE_PATH CDMA_VP_PC_TO_PREFIX
     /prefix/${CDMA_VP_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/cdma_vp.pc.in
               ${PROJECT_BINARY_DIR}/cmake/cdma_vp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/cdma_vp.pc
        DESTINATION ${CDMA_VP_INSTALL_LIBDIR}/pkgconfig
        COMPONENT cdma_vp_devel)
