# Every dependency comes from Debian 12 packages (scripts/setup installs them).

find_package(Threads REQUIRED)
set(Boost_NO_WARN_NEW_VERSIONS ON)
find_package(Boost 1.81.0 EXACT REQUIRED CONFIG COMPONENTS json url)

# V8 from Debian's libnode108 / libnode-dev (Node 18's V8 10.2). Either the
# system package, or the copy scripts/setup unpacked into the build tree when
# apt refused it. Never /usr/include/node alone: another vendor's nodejs
# package puts a different V8's headers there.
set(CORRAL_LIBNODE_ROOT "${CMAKE_SOURCE_DIR}/build/third_party/libnode" CACHE PATH
    "Folder libnode-dev was unpacked into by scripts/setup")
if(EXISTS "${CORRAL_LIBNODE_ROOT}/usr/include/node/v8.h")
  set(CORRAL_V8_INCLUDE "${CORRAL_LIBNODE_ROOT}/usr/include/node")
  set(CORRAL_V8_LIBDIR "${CORRAL_LIBNODE_ROOT}/usr/lib/x86_64-linux-gnu")
  set(CORRAL_LIBNODE_LOCAL ON)
elseif(EXISTS "/usr/lib/x86_64-linux-gnu/libnode.so.108" AND EXISTS "/usr/include/node/v8.h")
  set(CORRAL_V8_INCLUDE "/usr/include/node")
  set(CORRAL_V8_LIBDIR "/usr/lib/x86_64-linux-gnu")
  set(CORRAL_LIBNODE_LOCAL OFF)
else()
  message(FATAL_ERROR "V8 (libnode-dev 18) not found: run scripts/setup first")
endif()
# The link targets below are INTERFACE libraries of our own so that the
# exported package (cmake/corralConfig.cmake.in) can name them: a consumer of
# the static archives links what they need without listing it.
add_library(corral_v8 INTERFACE)
set_target_properties(corral_v8 PROPERTIES EXPORT_NAME v8_runtime)
target_include_directories(corral_v8 SYSTEM INTERFACE "$<BUILD_INTERFACE:${CORRAL_V8_INCLUDE}>")
# Debian's libnode is built without pointer compression or the V8 sandbox,
# which is what v8.h assumes when neither V8_COMPRESS_POINTERS nor
# V8_ENABLE_SANDBOX is defined: nothing to add here.
include(GNUInstallDirs)
if(CORRAL_LIBNODE_LOCAL)
  # Installed beside corral's own libraries, found through RUNPATH
  # ($ORIGIN/../lib/corral), never through the build tree.
  set(CORRAL_LIBNODE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/corral")
  target_link_libraries(corral_v8 INTERFACE
    "$<BUILD_INTERFACE:${CORRAL_V8_LIBDIR}/libnode.so.108>"
    "$<INSTALL_INTERFACE:$<INSTALL_PREFIX>/${CORRAL_LIBNODE_INSTALL_DIR}/libnode.so.108>")
  set(CMAKE_BUILD_RPATH "${CORRAL_V8_LIBDIR}")
  file(RELATIVE_PATH _corral_bin_to_libnode "/${CMAKE_INSTALL_BINDIR}" "/${CORRAL_LIBNODE_INSTALL_DIR}")
  set(CMAKE_INSTALL_RPATH "$ORIGIN/${_corral_bin_to_libnode}")
else()
  target_link_libraries(corral_v8 INTERFACE "${CORRAL_V8_LIBDIR}/libnode.so.108")
endif()

find_package(PkgConfig REQUIRED)
pkg_check_modules(SECCOMP REQUIRED libseccomp)
find_library(CORRAL_SECCOMP_LIBRARY NAMES seccomp HINTS ${SECCOMP_LIBRARY_DIRS} REQUIRED)
add_library(corral_seccomp INTERFACE)
set_target_properties(corral_seccomp PROPERTIES EXPORT_NAME seccomp_runtime)
target_include_directories(corral_seccomp SYSTEM INTERFACE "$<BUILD_INTERFACE:${SECCOMP_INCLUDE_DIRS}>")
target_link_libraries(corral_seccomp INTERFACE "${CORRAL_SECCOMP_LIBRARY}")
# RE2 (libre2-dev): every pattern a manifest or a user supplies is matched
# in linear time (std::regex recurses per repetition and overflows the stack).
pkg_check_modules(RE2 REQUIRED re2)
find_library(CORRAL_RE2_LIBRARY NAMES re2 HINTS ${RE2_LIBRARY_DIRS} REQUIRED)
add_library(corral_re2 INTERFACE)
set_target_properties(corral_re2 PROPERTIES EXPORT_NAME re2_runtime)
target_include_directories(corral_re2 SYSTEM INTERFACE "$<BUILD_INTERFACE:${RE2_INCLUDE_DIRS}>")
target_link_libraries(corral_re2 INTERFACE "${CORRAL_RE2_LIBRARY}" Threads::Threads)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 CONFIG QUIET)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)

if(CORRAL_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CORRAL_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# mruby 3.1 from Debian's libmruby-dev: a static archive with every gem of
# Debian's build compiled in; src/sandbox/ruby opens states with the core
# and an explicit gem list instead of mrb_open().
find_path(CORRAL_MRUBY_INCLUDE mruby.h PATHS /usr/include NO_DEFAULT_PATH)
find_library(CORRAL_MRUBY_LIBRARY NAMES libmruby.a PATHS /usr/lib /usr/lib/x86_64-linux-gnu
             NO_DEFAULT_PATH)
if(NOT CORRAL_MRUBY_INCLUDE OR NOT CORRAL_MRUBY_LIBRARY)
  message(FATAL_ERROR "mruby (libmruby-dev 3.1) not found: run scripts/setup first")
endif()
add_library(corral_mruby INTERFACE)
set_target_properties(corral_mruby PROPERTIES EXPORT_NAME mruby_runtime)
target_include_directories(corral_mruby SYSTEM INTERFACE "$<BUILD_INTERFACE:${CORRAL_MRUBY_INCLUDE}>")
target_link_libraries(corral_mruby INTERFACE "${CORRAL_MRUBY_LIBRARY}" m)
