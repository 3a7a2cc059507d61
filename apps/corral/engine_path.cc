#include "engine_path.hpp"

#include "core/companion.hpp"

// The build tree and the install prefix (apps/corral/CMakeLists.txt).
#ifndef CORRAL_ENGINE_BUILD_DIR
#define CORRAL_ENGINE_BUILD_DIR ""
#endif
#ifndef CORRAL_ENGINE_BUILD_PATH
#define CORRAL_ENGINE_BUILD_PATH ""
#endif
#ifndef CORRAL_ENGINE_INSTALL_PATH
#define CORRAL_ENGINE_INSTALL_PATH ""
#endif

namespace corral::app {

std::string find_engine(std::string& error) {
  return core::find_companion({"corral-engine", nullptr, CORRAL_ENGINE_BUILD_DIR,
                               CORRAL_ENGINE_BUILD_PATH, CORRAL_ENGINE_INSTALL_PATH},
                              error);
}

}  // namespace corral::app
