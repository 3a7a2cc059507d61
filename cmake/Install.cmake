# `cmake --install BUILD --prefix PREFIX` lays out:
#   bin/corral                         the front binary (no engine: apps/corral/cli.hpp)
#   libexec/corral/corral-engine       run, serve, check, mcp, worker (RUNPATH only into PREFIX)
#   libexec/corral/corral-ruby-helper  the program Ruby guests run in
#   include/corral/*.hpp               the public API
#   lib/libcorral*.a                   one static archive per layer
#   lib/corral/libnode.so.108          only where scripts/setup unpacked libnode locally
#   lib/cmake/corral/                  find_package(corral CONFIG) and its targets
#   lib/pkgconfig/corral.pc            the same for pkg-config users
# docs/embedding.md says what each target pulls in.

include(CMakePackageConfigHelpers)

# API targets an embedder names. Each is one line in target_link_libraries;
# everything below it comes along through the exported link interfaces.
# The layer archives (corral::core, client, sandbox, process, bind, pool,
# server, mcp) are exported under their layer's name
# (src/CMakeLists.txt); corral::client is the executor client alone.
add_library(corral_all INTERFACE)      # corral::corral: every layer
target_link_libraries(corral_all INTERFACE corral_mcp corral_server corral_client corral corral_sandbox)
set_target_properties(corral_all PROPERTIES EXPORT_NAME corral)

set(CORRAL_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/corral")

install(TARGETS corral_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS corral_engine RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/corral)
# The program every in-process Ruby Sandbox execs (src/sandbox/ruby/helper.hpp
# says how bin/corral and embedders find it).
install(TARGETS corral_ruby_helper RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/corral)
install(TARGETS
    corral_core corral_client corral_sandbox corral_process corral_bind corral_pool corral_server corral_mcp
    corral corral_all
    corral_v8 corral_mruby corral_seccomp corral_re2
  EXPORT corralTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/corral DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT corralTargets NAMESPACE corral:: DESTINATION ${CORRAL_CMAKE_DIR})

if(CORRAL_LIBNODE_LOCAL)
  # The soname link and the file it names; the -dev symlink is not needed.
  install(FILES "${CORRAL_V8_LIBDIR}/libnode.so.108" DESTINATION ${CORRAL_LIBNODE_INSTALL_DIR})
endif()

set(CORRAL_PACKAGE_STAGING "${PROJECT_BINARY_DIR}/package")  # not a prefix anyone searches
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/corralConfig.cmake.in
  ${CORRAL_PACKAGE_STAGING}/corralConfig.cmake INSTALL_DESTINATION ${CORRAL_CMAKE_DIR})
write_basic_package_version_file(${CORRAL_PACKAGE_STAGING}/corralConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CORRAL_PACKAGE_STAGING}/corralConfig.cmake
              ${CORRAL_PACKAGE_STAGING}/corralConfigVersion.cmake
        DESTINATION ${CORRAL_CMAKE_DIR})

# pkg-config: one package, every layer. The archives are static, so their
# dependencies are in Libs, not Libs.private. The prefix is found from the
# .pc file's own place, so an installed tree can be moved.
file(RELATIVE_PATH CORRAL_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" CORRAL_PC_TO_PREFIX "${CORRAL_PC_TO_PREFIX}")
if(CORRAL_LIBNODE_LOCAL)
  set(CORRAL_PC_LIBNODE "\${libdir}/corral/libnode.so.108 -Wl,-rpath,\${libdir}/corral")
else()
  set(CORRAL_PC_LIBNODE "${CORRAL_V8_LIBDIR}/libnode.so.108")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/corral.pc.in ${CORRAL_PACKAGE_STAGING}/corral.pc @ONLY)
install(FILES ${CORRAL_PACKAGE_STAGING}/corral.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
