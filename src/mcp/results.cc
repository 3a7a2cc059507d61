// The CallToolResult shapes and their cutting to the result budget.
#include "mcp/results.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "mcp/budget.hpp"

namespace corral::mcp {

namespace {

// The text block that says output bytes were replaced (core/utf8.hpp).
constexpr const char* kReplacedNote =
    "[the output held bytes that are not UTF-8: each ill-formed sequence reads U+FFFD]";

bool replaced(const Execution& e) { return e.stdout_replaced() || e.stderr_replaced(); }

// Hands each part a cut shortened to `keep` and adds the blocks that point
// at them; says so in one note. Nothing when `keep` is unset.
struct Whole {
  const char* name;
  const char* mime;
  const char* what;
  const std::string* text;
};
void keep_wholes(const Keep& keep, std::initializer_list<Whole> parts, json::array& content) {
  if (!keep) return;
  std::vector<const Whole*> cut;
  std::vector<ResultStore::Text> texts;
  for (const Whole& part : parts) {
    if (!part.text) continue;
    cut.push_back(&part);
    texts.push_back({part.name, part.mime,
                     fmt::format("The whole {} ({} bytes) that the result budget cut", part.what,
                                 part.text->size()),
                     *part.text});
  }
  if (cut.empty()) return;
  std::vector<std::optional<json::object>> blocks = keep(std::move(texts));
  std::string kept, lost;
  for (std::size_t i = 0; i < cut.size(); ++i) {
    const bool linked = i < blocks.size() && blocks[i];
    std::string& list = linked ? kept : lost;
    list += fmt::format("{}{} ({} bytes)", list.empty() ? "" : ", ", cut[i]->name,
                        cut[i]->text->size());
    if (linked) content.push_back(std::move(*blocks[i]));
  }
  if (!kept.empty())
    content.push_back(text_block("[what the cut dropped is kept whole: " + kept +
                                 "; resources/read the linked URIs, whole or a page at a time with "
                                 "?offset=BYTES&length=BYTES (at most 1 MiB a page)]"));
  if (!lost.empty())
    content.push_back(
        text_block("[not kept (larger than the server keeps, alone or with this result's other "
                   "parts, or kept results are off): " +
                   lost + "]"));
}

json::object failure_json(const Failure& failure) {
  return json::object{{"code", to_string(failure.code)},
                      {"message", failure.message},
                      {"retryable", failure.retryable()}};
}

// `room` bytes shared by stdout and stderr needing `out_size` and
// `err_size`: each gets half, and one that needs less leaves the rest to
// the other. Returns {stdout's, stderr's}.
std::pair<std::size_t, std::size_t> split_room(std::size_t room, std::size_t out_size,
                                               std::size_t err_size) {
  const std::size_t err_room =
      std::min(err_size, std::max(room / 2, room - std::min(out_size, room)));
  return {room - err_room, err_room};
}

// A command's output view (bind::output_view: stdout, stderr, exitCode,
// truncated, replaced?) whose JSON fits in about `budget` bytes and still
// follows bind::output_schema(): only the two strings are cut (between
// characters, each cut marked), every other field stays, and `truncated`
// becomes true when anything was cut. Sets `cut` then.
json::object command_view(const Execution& execution, std::size_t budget, bool& cut,
                          bool* out_cut = nullptr, bool* err_cut = nullptr) {
  json::value parsed = parse_or_null(bind::output_view(execution));
  if (!parsed.is_object())  // output_view always writes an object; a bug otherwise
    throw std::logic_error("the command's output view did not read back as an object");
  json::object view = std::move(parsed.as_object());
  if (json::serialize(view).size() <= budget) return view;
  const std::string out(view.at("stdout").as_string());
  const std::string err(view.at("stderr").as_string());
  json::object frame = view;
  frame["stdout"] = "";
  frame["stderr"] = "";
  frame["truncated"] = true;
  const std::size_t fixed = json::serialize(frame).size() - 4;  // less the two empty strings
  const std::size_t room = budget > fixed ? budget - fixed : 0;
  const std::size_t out_size = json::serialize(json::string_view(out)).size();
  const std::size_t err_size = json::serialize(json::string_view(err)).size();
  const auto [out_room, err_room] = split_room(room, out_size, err_size);
  bool o = false, e = false;
  view["stdout"] = cut_json_string(out, out_room, o);
  view["stderr"] = cut_json_string(err, err_room, e);
  view["truncated"] = true;
  cut = true;
  if (out_cut) *out_cut = o;
  if (err_cut) *err_cut = e;
  return view;
}

std::string budget_note(std::size_t budget) {
  return fmt::format(
      "[the output was cut to fit the result budget of {} bytes: stdout and stderr lost their "
      "end, each cut is marked; `truncated` is true]",
      budget);
}

// The failure's text block showing `message`, held to `allowance` bytes of
// JSON (a guest's error message is the guest's to make long); sets `cut`
// then.
json::object failure_block(const Failure& failure, std::string_view message, std::size_t allowance,
                           bool& cut) {
  json::object f = failure_json(failure);
  f["message"] = cut_json_string(message, allowance, cut);
  return text_block(json::serialize(f));
}

// keep_wholes for a failure: its message (as the result shows it) and its
// output, those that were cut.
void keep_failure_wholes(const Keep& keep, const Failure& failure, const std::string& message,
                         bool message_cut, bool out_cut, bool err_cut, json::array& content) {
  const Execution* e = failure.execution.get();
  keep_wholes(keep,
              {{"message.txt", "text/plain", "error message", message_cut ? &message : nullptr},
               {"stdout.txt", "text/plain", "stdout", out_cut ? &e->stdout_text() : nullptr},
               {"stderr.txt", "text/plain", "stderr", err_cut ? &e->stderr_text() : nullptr}},
              content);
}

// A failed run: the failure, then what its console held.
json::object failed_run_result(const Failure& failure, std::size_t budget, const Keep& keep) {
  json::array content;
  bool message_cut = false, out_cut = false, err_cut = false;
  content.push_back(failure_block(failure, failure.message, budget / 2, message_cut));
  const std::size_t used = content.back().at("text").as_string().size();
  if (failure.execution) {
    const Execution& e = *failure.execution;
    const auto [out_room, err_room] = split_room(budget > used ? budget - used : 0,
                                                 e.stdout_text().size(), e.stderr_text().size());
    if (!e.stdout_text().empty())
      content.push_back(text_block("stdout:\n" + cut_text(e.stdout_text(), out_room, out_cut)));
    if (!e.stderr_text().empty())
      content.push_back(text_block("stderr:\n" + cut_text(e.stderr_text(), err_room, err_cut)));
    if (replaced(e)) content.push_back(text_block(kReplacedNote));
  }
  if (message_cut || out_cut || err_cut) {
    content.push_back(text_block(
        fmt::format("[the result was cut to fit the result budget of {} bytes]", budget)));
    keep_failure_wholes(keep, failure, failure.message, message_cut, out_cut, err_cut, content);
  }
  return json::object{{"content", std::move(content)}, {"isError", true}};
}

json::object failed_command_result(const Failure& failure, std::size_t budget, const Keep& keep) {
  json::array content;
  const std::string message =
      failure.code == FailureCode::busy
          ? failure.message +
                " Every execution slot of this command is taken; retry after the running call "
                "ends."
          : failure.message;
  bool message_cut = false, cut = false, out_cut = false, err_cut = false;
  content.push_back(failure_block(failure, message, budget / 2, message_cut));
  const std::size_t used = content.back().at("text").as_string().size();
  if (failure.execution) {
    const Execution& e = *failure.execution;
    const std::size_t room = budget > used ? budget - used : 0;
    content.push_back(text_block(json::serialize(command_view(e, room, cut, &out_cut, &err_cut))));
    if (replaced(e)) content.push_back(text_block(kReplacedNote));
    if (cut) content.push_back(text_block(budget_note(budget)));
  }
  if (message_cut)
    content.push_back(text_block(fmt::format(
        "[the failure's message was cut to fit the result budget of {} bytes]", budget)));
  keep_failure_wholes(keep, failure, message, message_cut, out_cut, err_cut, content);
  return json::object{{"content", std::move(content)}, {"isError", true}};
}

}  // namespace

json::object text_block(std::string text) {
  return json::object{{"type", "text"}, {"text", std::move(text)}};
}

json::object failure_result(const Failure& failure) {
  return json::object{{"content", json::array{text_block(json::serialize(failure_json(failure)))}},
                      {"isError", true}};
}

json::object execution_result(const pool::Outcome& outcome, std::size_t budget, const Keep& keep) {
  if (!outcome.ok()) return failed_run_result(outcome.failure(), budget, keep);
  const Execution& e = outcome.execution();
  json::value value = parse_or_null(e.value());
  std::string out = e.stdout_text();
  std::string err = e.stderr_text();
  bool cut = false, out_cut = false, err_cut = false, value_cut = false;
  const std::size_t value_size = json::serialize(value).size();
  if (value_size + out.size() + err.size() > budget) {
    out = cut_text(out, budget / 4, out_cut);
    err = cut_text(err, budget / 4, err_cut);
    Cut c = cut_to_budget(value, budget - out.size() - err.size());
    value_cut = c.cut;
    cut = out_cut || err_cut || value_cut;
    value = std::move(c.value);
  }
  json::array content;
  content.push_back(text_block(json::serialize(value)));
  if (!out.empty()) content.push_back(text_block("stdout:\n" + out));
  if (!err.empty()) content.push_back(text_block("stderr:\n" + err));
  if (e.stdout_truncated() || e.stderr_truncated())
    content.push_back(text_block("[console output past the run's output cap was dropped]"));
  json::object structured{{"value", value}};
  if (replaced(e)) {
    structured["replaced"] = true;
    content.push_back(text_block(kReplacedNote));
  }
  if (cut) {
    structured["truncated"] = true;
    content.push_back(text_block(fmt::format(
        "[the result was cut to fit the result budget of {} bytes: arrays and objects lost their "
        "tail, long strings their end; each cut is marked]",
        budget)));
    const std::string whole_value = value_cut ? json::serialize(parse_or_null(e.value())) : "";
    keep_wholes(keep,
                {{"value.json", "application/json", "value", value_cut ? &whole_value : nullptr},
                 {"stdout.txt", "text/plain", "stdout", out_cut ? &e.stdout_text() : nullptr},
                 {"stderr.txt", "text/plain", "stderr", err_cut ? &e.stderr_text() : nullptr}},
                content);
  }
  return json::object{{"content", std::move(content)},
                      {"structuredContent", std::move(structured)}};
}

json::object command_result(const std::optional<Execution>& execution,
                            const std::optional<Failure>& failure, std::size_t budget,
                            const Keep& keep) {
  if (failure) return failed_command_result(*failure, budget, keep);
  bool cut = false, out_cut = false, err_cut = false;
  json::object v = command_view(*execution, budget, cut, &out_cut, &err_cut);
  json::array content;
  const json::value* out = v.if_contains("stdout");
  const json::value* err = v.if_contains("stderr");
  content.push_back(text_block(out && out->is_string() && !out->get_string().empty()
                                   ? std::string(out->get_string())
                                   : std::string("(no output; exit code 0)")));
  if (err && err->is_string() && !err->get_string().empty())
    content.push_back(text_block("stderr:\n" + std::string(err->get_string())));
  if (replaced(*execution)) content.push_back(text_block(kReplacedNote));
  if (cut) content.push_back(text_block(budget_note(budget)));
  keep_wholes(
      keep,
      {{"stdout.txt", "text/plain", "stdout", out_cut ? &execution->stdout_text() : nullptr},
       {"stderr.txt", "text/plain", "stderr", err_cut ? &execution->stderr_text() : nullptr}},
      content);
  return json::object{{"content", std::move(content)}, {"structuredContent", std::move(v)}};
}

double seconds_since(process::Clock::time_point at) {
  return std::chrono::duration<double>(process::Clock::now() - at).count();
}

std::string rfc3339(process::Clock::time_point at) {
  const auto system =
      std::chrono::system_clock::now() -
      std::chrono::duration_cast<std::chrono::system_clock::duration>(process::Clock::now() - at);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(system));
}

std::string held_slots(const bind::Binding& binding) {
  const process::Status status = binding.status();
  std::string out;
  for (std::size_t i = 0; i < status.slot_status.size(); ++i) {
    const process::SlotStatus& slot = status.slot_status[i];
    if (slot.state == process::SlotState::idle) continue;
    out += fmt::format("{} slot {} is held: {}", out.empty() ? "" : ";", i,
                       process::to_string(slot.state));
    if (slot.pid > 0) out += fmt::format(", pid {}", slot.pid);
    if (!slot.program.empty()) out += ", " + slot.program;
    out += fmt::format(", since {} ({:.1f} s ago)", rfc3339(slot.since), seconds_since(slot.since));
    if (slot.state == process::SlotState::cleanup_failed)
      out += " (a unit not yet seen empty; corral re-checks it and frees the slot when it is)";
  }
  return out.empty() ? out : " The" + out + ".";
}

json::value parse_or_null(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(json::string_view(text.data(), text.size()), ec);
  return ec ? json::value(nullptr) : v;
}

}  // namespace corral::mcp
