// apps/corral/cmd_commands.cc: `corral bind`, `corral tools` and `corral
// call`, the command binding from a manifest file.
//
//   corral bind PROGRAM [SUBCOMMAND...]         a manifest from the program's help
//   corral tools --manifest FILE                operations, schemas, profiles
//   corral call --manifest FILE NAME [INPUT]    run one; print the result envelope
//   corral call --view --manifest FILE NAME ..  print only the output view
//
// `call` prints the envelope `corral run --json` prints (src/core/envelope.hpp)
// with the output view as the Execution's value; it exits 0 on success and 1
// on any failure, with "corral: <code>: <message>" on stderr. A manifest that
// does not parse is invalid_request, one whose executable is missing
// setup_error. SIGINT or SIGTERM cancels the running call (its unit is
// cleaned up). FILE `-` reads the manifest from stdin (relative paths in it
// resolve against the working directory).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>

#include "call_slots.hpp"
#include "commands.hpp"
#include "core/envelope.hpp"
#include "core/json.hpp"
#include "core/units.hpp"
#include "corral/bind.hpp"
#include "corral/bind_import.hpp"

namespace corral::app {

namespace {

namespace json = core::json;

// Binds the manifest, or says why not and returns null: setup_error for a
// missing executable, unavailable for a unit the host lacks, invalid_request
// for the rest. With `envelope`, the failure is also printed on stdout.
// `slots` and `key`, when given, get the manifest's slot count and what
// identifies it across processes (its realpath, or its text from stdin).
std::unique_ptr<bind::Binding> load_binding(const std::string& manifest, bool envelope = false,
                                            int* slots = nullptr, std::string* key = nullptr) {
  auto refuse = [envelope](FailureCode code, const char* message) {
    if (envelope) {
      std::printf("%s\n", core::envelope_text(Failure{code, message, nullptr}).c_str());
    }
    std::fprintf(stderr, "corral: %s: %s\n", std::string(to_string(code)).c_str(), message);
  };
  try {
    bind::CommandTree tree;
    if (manifest == "-") {
      const std::string text{std::istreambuf_iterator<char>(std::cin),
                             std::istreambuf_iterator<char>()};
      tree = bind::load_manifest(text);
      if (key != nullptr) *key = "stdin:" + text;
    } else {
      tree = bind::load_manifest_file(manifest);
      if (key != nullptr) {
        std::error_code ec;
        *key = std::filesystem::canonical(manifest, ec).string();
        if (ec) *key = manifest;
      }
    }
    if (slots != nullptr) *slots = tree.supervisor.slots;
    return bind::Binding::bind(std::move(tree));
  } catch (const bind::ExecutableNotFound& e) {
    refuse(FailureCode::setup_error, e.what());
  } catch (const std::invalid_argument& e) {
    refuse(FailureCode::invalid_request, e.what());
  } catch (const Error& e) {
    refuse(e.code(), e.what());
  }
  return nullptr;
}

int print_tools(const std::string& manifest) {
  std::unique_ptr<bind::Binding> binding = load_binding(manifest);
  if (!binding) return 1;
  json::array operations;
  for (const auto& op : binding->operations()) {
    json::object entry;
    entry["name"] = op.name;
    entry["description"] = op.description;
    json::array path;
    for (const auto& segment : op.command_path) path.push_back(json::value(segment));
    entry["commandPath"] = std::move(path);
    entry["inputSchema"] = json::parse(op.input_schema);
    entry["outputSchema"] = json::parse(op.output_schema);
    entry["profile"] = json::parse(bind::profile_json(op.hardening));
    json::array protections;
    for (const auto& p : op.protections) {
      protections.push_back(
          json::object{{"name", p.name}, {"enforced", p.enforced}, {"detail", p.detail}});
    }
    entry["protections"] = std::move(protections);
    operations.push_back(std::move(entry));
  }
  json::object out;
  out["operations"] = std::move(operations);
  out["unit"] = std::string(process::to_string(binding->status().unit));
  std::printf("%s\n", json::serialize(out).c_str());
  return 0;
}

// Cancels `cancel` when SIGINT or SIGTERM arrives, until destroyed. The
// thread waits for those signals with no timeout; the destructor wakes it
// with SIGUSR1 sent to that thread alone (a tick here cost every call up to
// 50 ms at exit: bench/cli_bench, BM_FrontCallTrue).
class SignalCanceller {
 public:
  explicit SignalCanceller(process::CancelSource cancel) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, kWake);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    thread_ = std::thread([this, cancel]() mutable {
      for (;;) {
        siginfo_t info{};
        if (sigwaitinfo(&set_, &info) < 0) continue;  // EINTR
        // Only our own wake ends the wait: a SIGUSR1 sent to the process
        // from outside is not one (it comes from another pid). si_code is
        // no help: the kernel reports tgkill's SI_TKILL as SI_USER here.
        if (info.si_signo == kWake) {
          if (info.si_pid == getpid()) return;
          continue;
        }
        cancel.cancel();
      }
    });
  }
  ~SignalCanceller() {
    pthread_kill(thread_.native_handle(), kWake);
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  static constexpr int kWake = SIGUSR1;
  sigset_t set_;
  sigset_t old_;
  std::thread thread_;
};

int run_call(const std::string& manifest, const std::string& name, const std::string& input,
             bool view_only, const std::string& timeout) {
  process::RunOptions options;
  try {
    // Counted from here: what the caller waits for is the whole call.
    if (auto t = core::parse_duration(timeout, "--timeout"))
      options.deadline = process::Clock::now() + *t;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "corral: invalid_request: %s\n", e.what());
    return kExitUsage;
  }
  int slots = 1;
  std::string key;
  std::unique_ptr<bind::Binding> binding = load_binding(manifest, !view_only, &slots, &key);
  if (!binding) return 1;
  // The manifest's slots count every `corral call` of this user, not only
  // this process's (call_slots.hpp).
  std::optional<SharedSlot> slot;
  std::string why;
  switch (SharedSlot::take(key, slots, slot, why)) {
    case SharedSlot::Result::taken:
      break;
    case SharedSlot::Result::busy: {
      const Failure busy{FailureCode::busy,
                         "all " + std::to_string(slots) +
                             " slots of this manifest are held by other corral call processes",
                         nullptr};
      if (!view_only) std::printf("%s\n", core::envelope_text(busy).c_str());
      std::fprintf(stderr, "corral: busy: %s\n", busy.message.c_str());
      return 1;
    }
    case SharedSlot::Result::unshared:
      std::fprintf(stderr, "corral: warning: slots are not shared with other calls: %s\n",
                   why.c_str());
      break;
  }
  process::CancelSource cancel;
  options.cancel = cancel;
  try {
    SignalCanceller canceller(cancel);
    Execution e = binding->call(name, input, options);
    const std::string out = view_only ? e.value() : core::envelope_text(e);
    std::printf("%s\n", out.c_str());
    return 0;
  } catch (const Error& e) {
    if (view_only) {
      if (e.execution()) std::printf("%s\n", bind::output_view(*e.execution()).c_str());
    } else {
      std::printf("%s\n", core::envelope_text(e.to_failure()).c_str());
    }
    std::fprintf(stderr, "corral: %s: %s\n", std::string(to_string(e.code())).c_str(), e.what());
    return 1;
  }
}

struct BindRequest {
  std::vector<std::string> words;  // PROGRAM [SUBCOMMAND...]
  std::string output;
  std::size_t depth = 3;
  std::size_t max_pages = 300;
  std::string budget = "2m";
};

int run_bind(const BindRequest& request) {
  auto refuse = [](FailureCode code, const std::string& message) {
    std::fprintf(stderr, "corral: %s: %s\n", std::string(to_string(code)).c_str(), message.c_str());
    return code == FailureCode::invalid_request ? 2 : 1;
  };
  bind::ImportOptions options;
  options.program = request.words.front();
  options.start.assign(request.words.begin() + 1, request.words.end());
  options.max_depth = request.depth;
  options.max_pages = request.max_pages;
  try {
    const auto budget = core::parse_duration(request.budget, "--budget");
    if (!budget) return refuse(FailureCode::invalid_request, "--budget cannot be none");
    options.budget = *budget;
    bind::ImportResult result = bind::import_manifest(options);
    if (request.output.empty() || request.output == "-") {
      std::fwrite(result.manifest.data(), 1, result.manifest.size(), stdout);
    } else {
      std::ofstream out(request.output, std::ios::binary | std::ios::trunc);
      out << result.manifest;
      if (!out.flush()) {
        return refuse(FailureCode::setup_error, "cannot write " + request.output);
      }
    }
    std::fprintf(stderr,
                 "corral bind: %zu help pages (%zu runs), %zu commands, %zu flags, %zu to review\n",
                 result.pages, result.runs, result.commands, result.flags, result.reviews);
    for (const std::string& note : result.notes) {
      std::fprintf(stderr, "corral bind: %s\n", note.c_str());
    }
    return 0;
  } catch (const bind::ExecutableNotFound& e) {
    return refuse(FailureCode::setup_error, e.what());
  } catch (const std::invalid_argument& e) {
    return refuse(FailureCode::invalid_request, e.what());
  } catch (const Error& e) {
    return refuse(e.code(), e.what());
  }
}

}  // namespace

void add_command_commands(CLI::App& app, Action& action) {
  auto* bind = app.add_subcommand(
      "bind", "Write a manifest for a program from its own --help (each help run sandboxed)");
  auto request = std::make_shared<BindRequest>();
  bind->add_option("program", request->words, "The program, then a subcommand to start from")
      ->required()
      ->type_name("PROGRAM [SUBCOMMAND...]");
  bind->add_option("-o,--output", request->output, "Write the manifest here (default: stdout)")
      ->type_name("FILE");
  bind->add_option("--depth", request->depth, "Levels of subcommands to read (default 3)")
      ->check(CLI::Range(0, 16));
  bind->add_option("--max-pages", request->max_pages, "Help runs at most (default 300)")
      ->check(CLI::Range(1, 5000));
  bind->add_option("--budget", request->budget, "Time for all help runs together (default 2m)")
      ->type_name("DURATION");
  bind->callback([&action, request] { action = [request] { return run_bind(*request); }; });

  auto* tools = app.add_subcommand("tools", "List a manifest's operations and their schemas");
  auto manifest = std::make_shared<std::string>();
  tools->add_option("--manifest", *manifest, "Manifest file (YAML or JSON; - for stdin)")
      ->required()
      ->type_name("FILE");
  tools->callback([&action, manifest] { action = [manifest] { return print_tools(*manifest); }; });

  auto* call = app.add_subcommand("call", "Run one operation of a manifest");
  auto call_manifest = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto input = std::make_shared<std::string>("{}");
  auto view_only = std::make_shared<bool>(false);
  auto timeout = std::make_shared<std::string>("none");
  call->add_option("--manifest", *call_manifest, "Manifest file (YAML or JSON; - for stdin)")
      ->required()
      ->type_name("FILE");
  call->add_option("name", *name, "Operation name (see `corral tools`)")
      ->required()
      ->type_name("NAME");
  call->add_option("input", *input, R"(Input JSON: {"flags":{...},"args":[...]})")
      ->type_name("JSON");
  call->add_flag("--view", *view_only,
                 "Print only the output view {stdout,stderr,exitCode,truncated} instead of the "
                 "result envelope");
  call->add_option("--timeout", *timeout,
                   "Wall-clock limit of the call (e.g. 5s, 250ms; none: the binding's own, 5 min)")
      ->type_name("DURATION");
  call->callback([&action, call_manifest, name, input, view_only, timeout] {
    action = [call_manifest, name, input, view_only, timeout] {
      return run_call(*call_manifest, *name, *input, *view_only, *timeout);
    };
  });
}

}  // namespace corral::app
