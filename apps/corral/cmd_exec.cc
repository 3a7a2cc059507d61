// apps/corral/cmd_exec.cc: `corral exec --server ws://HOST:PORT FILE|-`, the
// executor protocol's command-line client.
//
//   corral exec --server URL [--echo] [--manifest FILE] [--timeout 5s|none]
//               [--language javascript|typescript|ruby] [--token TOKEN] [--json] FILE|-
//
// The guest may call `codemode.echo(input)` (--echo: answers with its input)
// and every operation of a manifest of bound commands (--manifest: answered
// by running the command here, on the caller's machine, as `corral call`
// would). Exit status: 0 success, 1 the run (or the connection) failed, 2 bad
// invocation; the failure is printed as "corral: <code>: <message>".
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "commands.hpp"
#include "core/envelope.hpp"
#include "core/json.hpp"
#include "core/units.hpp"
#include "corral/bind.hpp"
#include "corral/client.hpp"
#include "sandbox/identifier.hpp"

namespace corral::app {
namespace {

struct ExecFlags {
  std::string server;
  std::string file;
  std::string manifest;
  std::string timeout;
  std::string token;
  std::string language;  // empty: by the file's extension (.rb ruby, .ts typescript)
  bool echo = false;
  bool json = false;
};

int bad_invocation(const std::string& message) {
  std::fprintf(stderr, "corral: invalid_request: %s\n", message.c_str());
  return 2;
}

int run_exec(const ExecFlags& flags) {
  client::ExecuteRequest request;
  std::unique_ptr<bind::Binding> binding;
  try {
    request.language = language_of(flags.language, flags.file);
    request.code = read_source(flags.file);
    if (!flags.timeout.empty()) {
      if (auto t = core::parse_duration(flags.timeout, "--timeout")) {
        request.timeout = client::Timeout::of(*t);
      } else {
        request.timeout = client::Timeout::widest();
      }
    }
    if (flags.echo) request.tools.push_back({"echo", "Answers with its input.", ""});
    if (!flags.manifest.empty()) {
      binding = bind::Binding::bind(bind::load_manifest_file(flags.manifest));
      for (const auto& op : binding->operations()) {
        if (!sandbox::is_identifier(op.name)) {
          std::fprintf(stderr, "corral: skipping operation %s: not a JavaScript identifier\n",
                       op.name.c_str());
          continue;
        }
        request.tools.push_back({op.name, op.description, op.input_schema});
      }
    }
  } catch (const std::invalid_argument& e) {
    return bad_invocation(e.what());
  } catch (const Error& e) {
    std::fprintf(stderr, "corral: %s: %s\n", std::string(to_string(e.code())).c_str(), e.what());
    return 1;
  }

  auto handler = [&binding](const std::string& name, const std::string& input) -> std::string {
    if (name == "echo" && !(binding && binding->find(name))) return input;
    if (!binding || !binding->find(name)) throw std::runtime_error("no such tool: " + name);
    try {
      return binding->call(name, input).value();
    } catch (const Error& e) {
      throw std::runtime_error(std::string(to_string(e.code())) + ": " + e.what());
    }
  };

  std::optional<client::Outcome> answered;
  try {
    client::ConnectOptions options;
    if (!flags.token.empty()) options.authorization = "Bearer " + flags.token;
    auto connection = client::Client::connect(flags.server, options);
    answered.emplace(connection->execute(request, handler));
  } catch (const Error& e) {
    std::fprintf(stderr, "corral: %s: %s\n", std::string(to_string(e.code())).c_str(), e.what());
    return 1;
  }

  const client::Outcome& outcome = *answered;
  if (flags.json) {
    std::cout << core::envelope_text(outcome) << '\n';
  } else {
    const Execution* execution = outcome.ok()                  ? &outcome.execution()
                                 : outcome.failure().execution ? outcome.failure().execution.get()
                                                               : nullptr;
    if (execution) {
      std::cout << execution->stdout_text();
      std::cerr << execution->stderr_text();
    }
    if (outcome.ok()) std::cout << outcome.execution().value() << '\n';
  }
  std::cout.flush();
  if (!outcome.ok()) {
    std::fprintf(stderr, "corral: %s: %s\n", std::string(to_string(outcome.failure().code)).c_str(),
                 outcome.failure().message.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void add_exec_command(CLI::App& app, Action& action) {
  auto flags = std::make_shared<ExecFlags>();
  CLI::App* exec =
      app.add_subcommand("exec", "Run a JavaScript or Ruby file on an executor server");
  exec->add_option("--server", flags->server, "Executor server URL (ws://HOST:PORT)")
      ->required()
      ->type_name("URL");
  exec->add_option("file", flags->file, "Script to run, or - to read it from stdin")
      ->required()
      ->type_name("FILE");
  exec->add_flag("--echo", flags->echo, "Offer codemode.echo(input), which answers with its input");
  exec->add_option("--manifest", flags->manifest,
                   "Offer a manifest's bound commands as tools (run here, per call)")
      ->type_name("FILE");
  exec->add_option("--timeout", flags->timeout,
                   "Ask for this timeout (e.g. 5s, 250ms; none asks for the server's ceiling)")
      ->type_name("DURATION");
  exec->add_option("--language", flags->language,
                   "javascript, typescript or ruby (default: by the extension: .rb ruby, .ts "
                   "typescript, else javascript)")
      ->type_name("javascript|typescript|ruby");
  exec->add_option("--token", flags->token, "Send Authorization: Bearer TOKEN")->type_name("TOKEN");
  exec->add_flag("--json", flags->json, "Print the result envelope as JSON");
  exec->callback([&action, flags] { action = [flags] { return run_exec(*flags); }; });
}

}  // namespace corral::app
