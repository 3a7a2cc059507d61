// The C++ API example from docs/sandbox.md (built and run by ctest).
#include <corral/sandbox.hpp>

#include <cstdio>
#include <string>

int main() {
  corral::sandbox::Options options;
  options.timeout = std::chrono::seconds(5);
  corral::sandbox::Sandbox sandbox(options);

  // A tool: JSON in, JSON out. The guest sees codemode.add(...).
  sandbox.bind("codemode.add", [](std::string_view args) {
    // args is {"a":1,"b":2}; a real tool would parse it with a JSON library.
    return args == R"({"a":1,"b":2})" ? std::string("3") : std::string("null");
  });

  try {
    corral::Execution e = sandbox.execute(
        "async () => { console.log('adding 1 and 2'); return codemode.add({a: 1, b: 2}); }");
    std::printf("value: %s\nstdout: %s", e.value().c_str(), e.stdout_text().c_str());
    return 0;
  } catch (const corral::Error& e) {
    std::fprintf(stderr, "%s: %s\n", std::string(corral::to_string(e.code())).c_str(), e.what());
    return 1;
  }
}
