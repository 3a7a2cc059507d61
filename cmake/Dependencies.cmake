# Every dependency comes from Debian 12 packages (scripts/setup installs them).

find_package(Threads REQUIRED)
set(Boost_NO_WARN_NEW_VERSIONS ON)
find_package(Boost 1.81 EXACT REQUIRED COMPONENTS json url)

# V8 from Debian's libnode108 / libnode-dev (Node 18's V8 10.2). Either the
# system package, or the copy scripts/setup unpacked into the build tree when
# apt refused it. Never /usr/include/node alone: another vendor's nodejs
# package puts a different V8's headers there.
set(CORRAL_LIBNODE_ROOT "${CMAKE_SOURCE_DIR}/build/third_party/libnode" CACHE PATH
    "Folder libnode-dev was unpacked into by scripts/setup")
if(EXISTS "${CORRAL_LIBNODE_ROOT}/usr/include/node/v8.h")
  set(CORRAL_V8_INCLUDE "${CORRAL_LIBNODE_ROOT}/usr/include/node")
  set(CORRAL_V8_LIBDIR "${CORRAL_LIBNODE_ROOT}/usr/lib/x86_64-linux-gnu")
elseif(EXISTS "/usr/lib/x86_64-linux-gnu/libnode.so.108" AND EXISTS "/usr/include/node/v8.h")
  set(CORRAL_V8_INCLUDE "/usr/include/node")
  set(CORRAL_V8_LIBDIR "/usr/lib/x86_64-linux-gnu")
else()
  message(FATAL_ERROR "V8 (libnode-dev 18) not found: run scripts/setup first")
endif()
add_library(corral_v8 INTERFACE)
target_include_directories(corral_v8 SYSTEM INTERFACE "${CORRAL_V8_INCLUDE}")
target_link_libraries(corral_v8 INTERFACE "${CORRAL_V8_LIBDIR}/libnode.so.108")
# Debian's libnode is built without pointer compression or the V8 sandbox,
# which is what v8.h assumes when neither V8_COMPRESS_POINTERS nor
# V8_ENABLE_SANDBOX is defined: nothing to add here.
set(CMAKE_BUILD_RPATH "${CORRAL_V8_LIBDIR}")
set(CMAKE_INSTALL_RPATH "${CORRAL_V8_LIBDIR}")

find_package(PkgConfig REQUIRED)
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
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
target_include_directories(corral_mruby SYSTEM INTERFACE "${CORRAL_MRUBY_INCLUDE}")
target_link_libraries(corral_mruby INTERFACE "${CORRAL_MRUBY_LIBRARY}" m)
