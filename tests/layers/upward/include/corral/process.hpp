// A fixture for Layers.AnUpwardIncludeFailsTheCheck, never compiled: a
// public header of the process layer naming the MCP layer's.
#pragma once
#include "corral/mcp.hpp"
