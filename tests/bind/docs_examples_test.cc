// tests/bind/docs_examples_test.cc: every manifest example in
// docs/commands.md ("Every field, by example") bound and checked against the
// comments written under it, so the reference cannot drift from the code.
//
//   # call OP INPUT        then  #   argv: WORDS      (the executable by its base name)
//                          or    #   refused: TEXT    (the start of the refusal's reason)
//   # run OP INPUT         then  #   ok, exitCode N[, stdout: "JSON string"]
//                          or    #   CODE, exitCode N
//   # operations: A B C    the operations the bind offers, in order
//   # bind fails: TEXT     a part of the bind's error
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bind/bind_test_util.hpp"
#include "core/json.hpp"
#include "corral/failure.hpp"

namespace corral::bind {
namespace {

using testing::names;

struct Example {
  int line = 0;  // of the block's first line in the docs
  std::string yaml;
  std::vector<std::string> comments;  // "# ..." lines, without the "# "
};

std::vector<Example> examples() {
  std::ifstream in(CORRAL_SOURCE_DIR "/docs/commands.md");
  std::vector<Example> out;
  std::string line;
  bool inside = false;
  int number = 0;
  Example current;
  while (std::getline(in, line)) {
    ++number;
    if (!inside && line == "```yaml") {
      inside = true;
      current = Example{number + 1, "", {}};
    } else if (inside && line == "```") {
      inside = false;
      if (!current.comments.empty()) out.push_back(current);
    } else if (inside) {
      current.yaml += line + "\n";
      if (line.starts_with("# ")) current.comments.push_back(line.substr(2));
    }
  }
  return out;
}

std::string after(const std::string& text, const std::string& prefix) {
  return text.starts_with(prefix) ? text.substr(prefix.size()) : std::string();
}

// "OP INPUT" -> {OP, INPUT}
std::pair<std::string, std::string> split_call(const std::string& text) {
  const std::size_t space = text.find(' ');
  if (space == std::string::npos) return {text, "{}"};
  return {text.substr(0, space), text.substr(space + 1)};
}

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i != 0) out += ' ';
    out += i == 0 ? std::filesystem::path(argv[i]).filename().string() : argv[i];
  }
  return out;
}

TEST(DocsCommands, EveryExampleBindsAndCallsAsWritten) {
  const std::vector<Example> all = examples();
  // The reference's examples: losing them must fail here, not pass quietly.
  ASSERT_GE(all.size(), 12u);
  int checks = 0;
  for (const Example& example : all) {
    SCOPED_TRACE("docs/commands.md example at line " + std::to_string(example.line));
    std::unique_ptr<Binding> binding;
    std::string bind_error;
    try {
      binding = Binding::bind(load_manifest(example.yaml));
    } catch (const std::invalid_argument& e) {
      bind_error = e.what();
    }
    for (std::size_t i = 0; i < example.comments.size(); ++i) {
      const std::string& comment = example.comments[i];
      const std::string next = i + 1 < example.comments.size() ? example.comments[i + 1] : "";
      if (std::string expected = after(comment, "bind fails: "); !expected.empty()) {
        EXPECT_NE(bind_error.find(expected), std::string::npos) << bind_error;
        ++checks;
        continue;
      }
      ASSERT_TRUE(binding) << bind_error;
      if (std::string expected = after(comment, "operations: "); !expected.empty()) {
        std::string got;
        for (const std::string& name : names(*binding)) got += (got.empty() ? "" : " ") + name;
        EXPECT_EQ(got, expected);
        ++checks;
      } else if (std::string call = after(comment, "call "); !call.empty()) {
        auto [op, input] = split_call(call);
        if (std::string argv = after(next, "  argv: "); !argv.empty()) {
          EXPECT_EQ(joined(binding->argv_for(op, input)), argv) << call;
        } else if (std::string reason = after(next, "  refused: "); !reason.empty()) {
          try {
            binding->argv_for(op, input);
            ADD_FAILURE() << "not refused: " << call;
          } catch (const Error& e) {
            EXPECT_EQ(e.code(), FailureCode::invalid_request);
            EXPECT_EQ(std::string(e.what()).substr(0, reason.size()), reason) << e.what();
          }
        } else {
          ADD_FAILURE() << "a call without an argv or refused line: " << call;
        }
        ++checks;
      } else if (std::string run = after(comment, "run "); !run.empty()) {
        auto [op, input] = split_call(run);
        const std::size_t comma = next.find(", exitCode ");
        ASSERT_NE(comma, std::string::npos) << "a run without its outcome: " << run;
        const std::string outcome = next.substr(2, comma - 2);
        const int status = std::stoi(next.substr(comma + 11));
        // ", stdout: JSON-STRING" when the example shows what it prints.
        std::optional<std::string> stdout_text;
        if (const std::size_t at = next.find(", stdout: "); at != std::string::npos) {
          stdout_text = std::string(core::json::parse(next.substr(at + 10)).as_string());
        }
        try {
          Execution execution = binding->call(op, input);
          EXPECT_EQ(outcome, "ok") << run;
          EXPECT_FALSE(execution.failed());
          EXPECT_EQ(execution.exit_code(), status);
          if (stdout_text) {
            EXPECT_EQ(execution.stdout_text(), *stdout_text) << run;
          }
        } catch (const Error& e) {
          EXPECT_EQ(to_string(e.code()), outcome) << e.what();
          ASSERT_TRUE(e.execution());
          EXPECT_EQ(e.execution()->exit_code(), status);
        }
        ++checks;
      }
    }
  }
  EXPECT_GE(checks, 20);
}

}  // namespace
}  // namespace corral::bind
