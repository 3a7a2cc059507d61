// src/core/variables.hpp: the CORRAL_ environment variables corral's programs
// read, and the warning for one that names none of them. In core so that the
// front `corral` binary (status, maintenance) warns the same way as `corral
// serve` without linking the daemon's settings parser.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace corral::core {

// Every setting's variable, CORRAL_HOST ... (the daemon's settings; a test
// holds this list equal to daemon::SettingsParser::variables()).
std::span<const std::string_view> setting_variables();

// A warning for each CORRAL_ variable among `names` that is neither a
// setting nor one the build and test tools read, naming the closest setting
// when one is close ("CORRAL_MAX_WORKER names no setting; it is ignored (did
// you mean CORRAL_MAX_WORKERS?)"). A mistyped variable would otherwise leave
// its setting at the default without a word.
std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names);

// The names of the variables in `env` (an environ-style array).
std::vector<std::string> environment_names(char** env);

}  // namespace corral::core
