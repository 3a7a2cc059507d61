#include "sandbox/v8/engine_v8.hpp"

namespace corral::sandbox {

std::unique_ptr<Engine> make_v8_engine(const Options& options) {
  return std::make_unique<v8engine::V8Engine>(options);
}

}  // namespace corral::sandbox
