// A fixture for Layers.AnUpwardIncludeFailsTheCheck, never compiled: the
// process layer does not use the pool.
#include "core/json.hpp"
#include "pool/frames.hpp"
