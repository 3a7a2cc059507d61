// tests/bind/cli11_fixture.cc: a program built from the fixture CLI11 tree;
// prints what it parsed as JSON so tests can check the round trip.
#include <boost/json.hpp>
#include <cstdio>

#include "bind/cli11_fixture_app.hpp"

int main(int argc, char** argv) {
  CLI::App app{"fixture"};
  corral::bind::testing::FixtureValues v;
  corral::bind::testing::build_fixture_app(app, v);
  CLI11_PARSE(app, argc, argv);
  boost::json::object out;
  out["ran"] = v.ran;
  out["name"] = v.name;
  out["times"] = v.times;
  out["ratio"] = v.ratio;
  out["loud"] = v.loud;
  out["port"] = v.port;
  boost::json::array tags, words;
  for (auto& t : v.tags) tags.push_back(boost::json::value(t));
  for (auto& w : v.words) words.push_back(boost::json::value(w));
  out["tags"] = tags;
  out["words"] = words;
  out["level"] = v.level;
  out["color"] = static_cast<int>(v.color);
  std::printf("%s\n", boost::json::serialize(out).c_str());
  return 0;
}
