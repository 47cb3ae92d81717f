# SPDX-License-Identifier: BSD-2-Clause
# EbbInstall.cmake: what `cmake --install` puts where, and how consumers find
# it again: headers, both libraries, a CMake package (ebb::ebb,
# ebb::ebb_static, version file) and a pkg-config file.

include(CMakePackageConfigHelpers)

set(EBB_CMAKE_PACKAGE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/ebb")

install(TARGETS ebb_static ebb_shared
        EXPORT ebbTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/ebb"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")

install(EXPORT ebbTargets
        NAMESPACE ebb::
        FILE ebbTargets.cmake
        DESTINATION "${EBB_CMAKE_PACKAGE_DIR}")
configure_package_config_file(
    "${PROJECT_SOURCE_DIR}/cmake/ebbConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/ebbConfig.cmake"
    INSTALL_DESTINATION "${EBB_CMAKE_PACKAGE_DIR}")
# 0.x: a minor bump may break the API, so only the same minor is compatible.
write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/ebbConfigVersion.cmake"
    VERSION "${PROJECT_VERSION}"
    COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/ebbConfig.cmake"
              "${PROJECT_BINARY_DIR}/ebbConfigVersion.cmake"
        DESTINATION "${EBB_CMAKE_PACKAGE_DIR}")

# The pkg-config file locates the prefix relative to itself (${pcfiledir}),
# so `cmake --install --prefix DIR` into any directory gives a working file.
# That only holds while the install dirs are relative to the prefix; an
# absolute CMAKE_INSTALL_LIBDIR/INCLUDEDIR is written as is. A distribution
# package, whose prefix is fixed, turns EBB_PKGCONFIG_RELOCATABLE off
# (debian/rules): with the prefix written out, pkg-config recognises
# /usr/include and /usr/lib/<triplet> and prints just -lebb.
option(EBB_PKGCONFIG_RELOCATABLE
       "ebb.pc locates the prefix relative to itself (\${pcfiledir})" ON)
set(EBB_PKGCONFIG_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(NOT EBB_PKGCONFIG_RELOCATABLE)
    set(EBB_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    foreach(dir LIBDIR INCLUDEDIR)
        if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
            set(EBB_PC_${dir} "${CMAKE_INSTALL_${dir}}")
        else()
            set(EBB_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
        endif()
    endforeach()
elseif(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(EBB_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(EBB_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
    set(EBB_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
    file(RELATIVE_PATH pc_to_prefix "/prefix/${EBB_PKGCONFIG_DIR}" "/prefix")
    string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
    set(EBB_PC_PREFIX "\${pcfiledir}/${pc_to_prefix}")
    set(EBB_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
    set(EBB_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/ebb.pc.in"
               "${PROJECT_BINARY_DIR}/ebb.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/ebb.pc" DESTINATION "${EBB_PKGCONFIG_DIR}")
