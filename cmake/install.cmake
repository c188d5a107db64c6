# The onnxc package files: a CMake config (find_package(onnxc) -> onnxc::runtime, onnxc_add_model())
# and a pkg-config file (onnxc.pc), each in two flavours: one in the build tree (point onnxc_DIR or
# PKG_CONFIG_PATH at the build folder) and one installed (relocatable: paths are found relative to
# the installed file). Included from tools/CMakeLists.txt, after the runtime and onnxc targets exist.
include(CMakeFindDependencyMacro)
include(CMakePackageConfigHelpers)

set(ONNXC_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onnxc)
set(ONNXC_PC_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
set(_onnxc_gen ${PROJECT_BINARY_DIR}/onnxc-package)

# --- CMake config, build tree: absolute paths to the targets' files -------------------------------
set(ONNXC_CFG_PREFIX_CODE "# build tree: ${PROJECT_BINARY_DIR}")
set(ONNXC_CFG_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/runtime/include")
set(ONNXC_CFG_SHARED_LIB "$<TARGET_FILE:onnxc_runtime>")
set(ONNXC_CFG_SONAME "$<TARGET_SONAME_FILE_NAME:onnxc_runtime>")
set(ONNXC_CFG_STATIC_LIB "$<TARGET_FILE:onnxc_runtime_static>")
set(ONNXC_CFG_EXECUTABLE "$<TARGET_FILE:onnxc>")
configure_file(${CMAKE_CURRENT_LIST_DIR}/onnxcConfig.cmake.in ${_onnxc_gen}/build/onnxcConfig.cmake.in @ONLY)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/onnxcConfig.cmake INPUT ${_onnxc_gen}/build/onnxcConfig.cmake.in)

# --- CMake config, installed: paths relative to the config file's folder --------------------------
file(RELATIVE_PATH _onnxc_up "/p/${ONNXC_CMAKE_INSTALL_DIR}" "/p")
set(ONNXC_CFG_PREFIX_CODE
    "get_filename_component(_onnxc_prefix \"\${CMAKE_CURRENT_LIST_DIR}/${_onnxc_up}\" ABSOLUTE)")
set(ONNXC_CFG_INCLUDE_DIR "\${_onnxc_prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
set(ONNXC_CFG_SHARED_LIB "\${_onnxc_prefix}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:onnxc_runtime>")
set(ONNXC_CFG_SONAME "$<TARGET_SONAME_FILE_NAME:onnxc_runtime>")
set(ONNXC_CFG_STATIC_LIB "\${_onnxc_prefix}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:onnxc_runtime_static>")
set(ONNXC_CFG_EXECUTABLE "\${_onnxc_prefix}/${CMAKE_INSTALL_BINDIR}/onnxc")
configure_file(${CMAKE_CURRENT_LIST_DIR}/onnxcConfig.cmake.in ${_onnxc_gen}/install/onnxcConfig.cmake.in @ONLY)
file(GENERATE OUTPUT ${_onnxc_gen}/install/onnxcConfig.cmake INPUT ${_onnxc_gen}/install/onnxcConfig.cmake.in)

write_basic_package_version_file(${PROJECT_BINARY_DIR}/onnxcConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${_onnxc_gen}/install/onnxcConfig.cmake ${PROJECT_BINARY_DIR}/onnxcConfigVersion.cmake
        DESTINATION ${ONNXC_CMAKE_INSTALL_DIR})

# --- pkg-config -------------------------------------------------------------------------------------
# Installed: relocatable through ${pcfiledir}.
file(RELATIVE_PATH _onnxc_pc_up "/p/${ONNXC_PC_INSTALL_DIR}" "/p")
string(REGEX REPLACE "/$" "" _onnxc_pc_up "${_onnxc_pc_up}")
set(ONNXC_PC_PREFIX "\${pcfiledir}/${_onnxc_pc_up}")
set(ONNXC_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(ONNXC_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
set(ONNXC_PC_EXECUTABLE "\${prefix}/${CMAKE_INSTALL_BINDIR}/onnxc")
configure_file(${CMAKE_CURRENT_LIST_DIR}/onnxc.pc.in ${_onnxc_gen}/install/onnxc.pc @ONLY)
install(FILES ${_onnxc_gen}/install/onnxc.pc DESTINATION ${ONNXC_PC_INSTALL_DIR})
# Build tree: pkg-config prefers NAME-uninstalled.pc when it is on PKG_CONFIG_PATH.
set(ONNXC_PC_PREFIX "${PROJECT_BINARY_DIR}")
set(ONNXC_PC_LIBDIR "$<TARGET_FILE_DIR:onnxc_runtime>")
set(ONNXC_PC_INCLUDEDIR "${PROJECT_SOURCE_DIR}/runtime/include")
set(ONNXC_PC_EXECUTABLE "$<TARGET_FILE:onnxc>")
configure_file(${CMAKE_CURRENT_LIST_DIR}/onnxc.pc.in ${_onnxc_gen}/build/onnxc-uninstalled.pc.in @ONLY)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/onnxc-uninstalled.pc INPUT ${_onnxc_gen}/build/onnxc-uninstalled.pc.in)
