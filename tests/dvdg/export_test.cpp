// Exports: DOT for people, GraphML, JSON and protobuf for programs, SVG via dot.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "command_runner.h"
#include "dvdg.pb.h"
#include "dvdg_fixture.h"
#include "analyzer/dvdg/exporters.h"

namespace apptracer::dvdg {
namespace {

class Export : public DvdgTest {
 public:
  void SetUp() override {
    DvdgTest::SetUp();
    add_vector_add(*this);
    graph_ = build();
    view_ = make_view(graph_, ViewFilter{});
  }
  Graph graph_;
  GraphView view_;
};

TEST_F(Export, ViewOfTheWholeGraphShowsEveryEdgeAndItsEndpoints) {
  EXPECT_EQ(view_.edges.size(), 5u);
  // a_h, b_h (version 0), a_d', b_d', s_d', s_h'.
  EXPECT_EQ(view_.values.size(), 6u);
  EXPECT_EQ(view_.ops.size(), 4u);
}

TEST_F(Export, DotHasBoxesWithLocationSizeVersionAndEdgesLabelledWithTheOperation) {
  std::ostringstream dot;
  write_dot(graph_, view_, dot);
  std::string text = dot.str();
  EXPECT_NE(text.find("digraph dvdg {"), std::string::npos);
  EXPECT_NE(text.find("node [shape=box"), std::string::npos);
  // a_d after the copy: allocation, address and size, version.
  EXPECT_NE(text.find("alloc #4 device (device 0)\\n0x7f0000000000, 4 KiB\\nversion 1"),
            std::string::npos)
      << text;
  std::smatch match;
  std::regex copy_edge(R"((v\d+) -> (v\d+) \[label="HtoD copy"\])");
  size_t copies = 0, kernels = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), copy_edge);
       it != std::sregex_iterator(); ++it)
    ++copies;
  std::regex kernel_edge(R"((v\d+) -> (v\d+) \[label="vector_add"\])");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kernel_edge);
       it != std::sregex_iterator(); ++it)
    ++kernels;
  EXPECT_EQ(copies, 2u);
  EXPECT_EQ(kernels, 2u);
  EXPECT_NE(text.find("[label=\"DtoH copy\"]"), std::string::npos);
}

// Host memory in no allocation the tracer saw (the stack, static data, a
// block below the size threshold) is named as such, never guessed.
TEST_F(DvdgTest, HostMemoryInNoAllocationIsAnUnknownHostRegion) {
  int64_t device = buffer("d", AllocKind::Device, 0x7f0000000000, 4096, 1);
  testing::MemcpyRow row;
  row.kind = CopyKind::HtoD;
  row.bytes = 256;
  row.src_address = 0x7ffd00001000;  // a stack address
  row.dst_alloc_id = device;
  row.dst_offset = 0;
  row.api_start_ns = 10;
  trace_->add(row);
  Graph graph = build();
  std::ostringstream dot;
  write_dot(graph, make_view(graph, ViewFilter{}), dot);
  EXPECT_NE(dot.str().find("unknown host region\\n0x7ffd00001000, 256 B"), std::string::npos)
      << dot.str();
}

TEST_F(Export, GraphmlIsWellFormedWithOneNodePerValueAndOneEdgePerEdge) {
  std::ostringstream graphml;
  write_graphml(graph_, view_, graphml);
  std::string text = graphml.str();
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("<node id="), 6u);
  EXPECT_EQ(count("</node>"), 6u);
  EXPECT_EQ(count("<edge id="), 5u);
  EXPECT_EQ(count("</edge>"), 5u);
  EXPECT_EQ(count("<graph id=\"dvdg\" edgedefault=\"directed\">"), 1u);
  EXPECT_NE(text.find("attr.name=\"label\""), std::string::npos);
  // Python's XML parser and networkx read it, when they are installed.
  if (std::system("python3 -c 'import xml.etree.ElementTree' 2>/dev/null") == 0) {
    std::string path = scratch_ / "export.graphml";
    std::ofstream(path) << text;
    std::string check =
        "python3 -c \"import sys, xml.etree.ElementTree as ET; "
        "g = ET.parse(sys.argv[1]).getroot(); ns = '{http://graphml.graphdrawing.org/xmlns}'; "
        "sys.exit(0 if len(g.findall('.//' + ns + 'node')) == 6 and "
        "len(g.findall('.//' + ns + 'edge')) == 5 else 1)\" " +
        path;
    EXPECT_EQ(std::system(check.c_str()), 0);
    if (std::system("python3 -c 'import networkx' 2>/dev/null") == 0) {
      std::string networkx =
          "python3 -c \"import sys, networkx as nx; g = nx.read_graphml(sys.argv[1]); "
          "sys.exit(0 if g.is_directed() and g.number_of_nodes() == 6 and g.number_of_edges() == 5 "
          "and g.edges['v9', 'v10']['label'] == 'DtoH copy' and g.nodes['v9']['version'] == 1 else "
          "1)\" " +
          path;
      EXPECT_EQ(std::system(networkx.c_str()), 0);
    }
  }
}

TEST_F(Export, JsonListsValuesOpsAndEdges) {
  std::ostringstream json;
  write_json(graph_, view_, json);
  nlohmann::json document = nlohmann::json::parse(json.str());
  ASSERT_EQ(document["edges"].size(), 5u);
  ASSERT_EQ(document["values"].size(), 6u);
  ASSERT_EQ(document["ops"].size(), 4u);
  std::map<int64_t, nlohmann::json> values;
  for (const auto& value : document["values"]) values[value["id"].get<int64_t>()] = value;
  std::map<int64_t, nlohmann::json> ops;
  for (const auto& op : document["ops"]) ops[op["id"].get<int64_t>()] = op;
  const auto& first = document["edges"][0];
  EXPECT_EQ(values[first["src"].get<int64_t>()]["memory"], "pageable");
  EXPECT_EQ(values[first["src"].get<int64_t>()]["version"], 0);
  EXPECT_EQ(values[first["dst"].get<int64_t>()]["memory"], "device");
  EXPECT_EQ(values[first["dst"].get<int64_t>()]["version"], 1);
  EXPECT_EQ(ops[first["op"].get<int64_t>()]["name"], "HtoD copy");
  EXPECT_EQ(first["bytes"], 4096);
  const auto& kernel_edge = document["edges"][2];
  EXPECT_EQ(ops[kernel_edge["op"].get<int64_t>()]["kind"], "kernel");
  EXPECT_TRUE(kernel_edge["bytes"].is_null());
}

// A kernel name with a control character and a byte that is not UTF-8:
// JSON and GraphML stay valid (U+FFFD for the byte; XML cannot hold ESC).
TEST_F(Export, JsonAndGraphmlStayValidWithAnyBytesInNames) {
  trace_->db().exec("UPDATE strings SET text = 'vector' || char(27) || CAST(x'ff' AS TEXT) || 'add' "
                    "WHERE text LIKE 'vector_add%'");
  graph_ = build();
  view_ = make_view(graph_, ViewFilter{});
  std::ostringstream json;
  write_json(graph_, view_, json);
  nlohmann::json document = nlohmann::json::parse(json.str());
  std::set<std::string> names;
  for (const auto& op : document["ops"]) names.insert(op["name"].get<std::string>());
  EXPECT_TRUE(names.count("vector\x1b\xef\xbf\xbd" "add")) << json.str();
  std::ostringstream graphml;
  write_graphml(graph_, view_, graphml);
  EXPECT_NE(graphml.str().find("vector\xef\xbf\xbd\xef\xbf\xbd" "add"), std::string::npos) << graphml.str();
  if (std::system("python3 -c 'import xml.etree.ElementTree' 2>/dev/null") == 0) {
    std::string path = scratch_ / "names.graphml";
    std::ofstream(path) << graphml.str();
    std::string check =
        "python3 -c \"import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])\" " + path;
    EXPECT_EQ(std::system(check.c_str()), 0);
  }
}

TEST_F(Export, ProtobufRoundTrips) {
  std::ostringstream bytes;
  write_proto(graph_, view_, bytes);
  proto::Graph message;
  ASSERT_TRUE(message.ParseFromString(bytes.str()));
  EXPECT_EQ(message.values_size(), 6);
  EXPECT_EQ(message.ops_size(), 4);
  ASSERT_EQ(message.edges_size(), 5);
  const proto::Edge& last = message.edges(4);
  EXPECT_EQ(last.kind(), proto::Edge::DATA);
  EXPECT_EQ(last.bytes(), 4096u);
  bool found_kernel = false;
  for (const proto::Op& op : message.ops()) {
    if (op.kind() == proto::Op::KERNEL) {
      found_kernel = true;
      EXPECT_EQ(op.name(), "vector_add");
      EXPECT_GT(op.end_ns(), op.start_ns());
    }
  }
  EXPECT_TRUE(found_kernel);
}

TEST_F(Export, CommandWritesEveryFormatAndRendersSvg) {
  std::string base = scratch_ / "export";
  CommandOutput result =
      run_apptracer("dvdg " + path_ + " --dot " + base + ".dot --graphml " + base +
                    ".graphml --json " + base + ".json --proto " + base + ".pb" +
                    (access("/usr/bin/dot", X_OK) == 0 ? " --svg " + base + ".svg" : ""));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("dvdg: "), std::string::npos);
  EXPECT_NE(read_file(base + ".dot").find("digraph dvdg"), std::string::npos);
  EXPECT_NE(read_file(base + ".graphml").find("<graphml"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(read_file(base + ".json"))["edges"].size(), 5u);
  proto::Graph message;
  EXPECT_TRUE(message.ParseFromString(read_file(base + ".pb")));
  EXPECT_EQ(message.edges_size(), 5);
  if (access("/usr/bin/dot", X_OK) == 0) {
    EXPECT_NE(read_file(base + ".svg").find("<svg"), std::string::npos);
  }
}

TEST_F(Export, SvgWithoutGraphvizIsOneClearError) {
  std::string svg = scratch_ / "no_dot.svg";
  CommandOutput result =
      run_apptracer("dvdg --no-store " + path_ + " --svg " + svg, "PATH=/nonexistent");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(
      result.err,
      "apptracer: --svg needs Graphviz's 'dot' (apt-get install graphviz); use --dot instead\n");
}

TEST_F(Export, DotToStandardOutputIsOnlyTheGraph) {
  CommandOutput result = run_apptracer("dvdg --no-store " + path_ + " --dot -");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("digraph dvdg {", 0), 0u) << result.out;
}

}  // namespace
}  // namespace apptracer::dvdg
