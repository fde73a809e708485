// The three model sources: explicit layers, PipeDream profiles (checked against the real
// files, with expectations computed independently of the parser) and zoo models (checked
// against published figures, not against the formulas they are built from).
#include "sim/model/model_sources.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

std::string read_profile(const std::string& name) {
  const std::string path = std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/profiles/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The message of the InputError `f` throws, or "" (with a failure) if it throws none.
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

// --- explicit layers -------------------------------------------------------------------

TEST(ExplicitLayers, ScalesToPerSample) {
  proto::Model model;
  proto::Layer* a = model.add_layers();
  a->set_name("a");
  a->set_fwd_ms(8);
  a->set_bwd_ms(16);
  a->set_activation_bytes(4000);
  a->set_parameter_bytes(123);
  proto::Layer* b = model.add_layers();
  b->set_name("b");
  b->set_fwd_ms(4);
  b->set_bwd_ms(4);
  b->set_activation_bytes(400);
  b->set_stash_bytes(1000);

  const ModelSpec spec = model_from_layers(model, 4);
  ASSERT_EQ(spec.layers.size(), 2u);
  const ModelLayer& la = spec.layers[0];
  EXPECT_EQ(la.name, "a");
  EXPECT_DOUBLE_EQ(la.fwd.seconds_per_sample, 0.002);
  EXPECT_DOUBLE_EQ(la.bwd.seconds_per_sample, 0.004);
  EXPECT_DOUBLE_EQ(la.activation_bytes_per_sample, 1000);
  EXPECT_DOUBLE_EQ(la.stash_bytes_per_sample, 1000);  // defaults to the activation
  EXPECT_EQ(la.parameter_bytes, 123);                 // weights do not scale
  EXPECT_EQ(la.consumers, std::vector<int>{1});
  const ModelLayer& lb = spec.layers[1];
  EXPECT_DOUBLE_EQ(lb.stash_bytes_per_sample, 250);  // explicit stash
  EXPECT_TRUE(lb.consumers.empty());
  // Back to the reference microbatch: the time the scenario wrote.
  EXPECT_DOUBLE_EQ(la.fwd.seconds(4, 1e12), 0.008);
}

// --- PipeDream profiles ----------------------------------------------------------------

struct FileNode {
  std::string id;
  bool input = false;
  double fwd_ms = 0, bwd_ms = 0, activation = 0, parameters = 0;
};

// A second, deliberately simple reading of a (list-free) profile.
void scan(const std::string& text, std::vector<FileNode>* nodes,
          std::vector<std::pair<std::string, std::string>>* edges) {
  const std::regex node_re(
      R"(^(node\d+) -- (.*) -- forward_compute_time=([0-9.]+), backward_compute_time=([0-9.]+), )"
      R"(activation_size=([0-9.]+), parameter_size=([0-9.]+)$)");
  const std::regex edge_re(R"(^\t(node\d+) -- (node\d+)$)");
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, node_re)) {
      nodes->push_back({m[1], m[2].str().rfind("Input", 0) == 0, std::stod(m[3]), std::stod(m[4]),
                        std::stod(m[5]), std::stod(m[6])});
    } else if (std::regex_match(line, m, edge_re)) {
      edges->emplace_back(m[1], m[2]);
    } else {
      ADD_FAILURE() << "unexpected line: " << line;
    }
  }
}

// Layer names start with the node id.
std::map<std::string, int> positions(const ModelSpec& spec) {
  std::map<std::string, int> pos;
  for (int i = 0; i < static_cast<int>(spec.layers.size()); ++i) {
    pos[spec.layers[i].name.substr(0, spec.layers[i].name.find(' '))] = i;
  }
  return pos;
}

TEST(PipedreamProfile, Vgg16MatchesTheFile) {
  const std::string text = read_profile("vgg16.graph.txt");
  std::vector<FileNode> nodes;
  std::vector<std::pair<std::string, std::string>> edges;
  scan(text, &nodes, &edges);
  ASSERT_EQ(nodes.size(), 41u);

  constexpr int kBatch = 128;
  const ModelSpec spec = model_from_pipedream(text, kBatch, false, "vgg16.graph.txt");
  ASSERT_EQ(spec.layers.size(), nodes.size());

  // A valid topological order that keeps every edge as a consumer.
  const std::map<std::string, int> pos = positions(spec);
  ASSERT_EQ(pos.size(), nodes.size());
  size_t consumer_count = 0;
  for (const ModelLayer& l : spec.layers) consumer_count += l.consumers.size();
  EXPECT_EQ(consumer_count, edges.size());
  for (const auto& [from, to] : edges) {
    const int a = pos.at(from), b = pos.at(to);
    EXPECT_LT(a, b) << from << " -- " << to;
    const std::vector<int>& c = spec.layers[a].consumers;
    EXPECT_NE(std::find(c.begin(), c.end(), b), c.end()) << from << " -- " << to;
  }

  double fwd_ms = 0, bwd_ms = 0, activation = 0;
  int64_t parameters = 0;
  for (const FileNode& n : nodes) {
    if (!n.input) fwd_ms += n.fwd_ms, bwd_ms += n.bwd_ms;
    activation += n.activation;
    parameters += std::llround(n.parameters);
  }
  double fwd_s = 0, bwd_s = 0, act = 0;
  int64_t params = 0;
  for (const ModelLayer& l : spec.layers) {
    fwd_s += l.fwd.seconds_per_sample;
    bwd_s += l.bwd.seconds_per_sample;
    act += l.activation_bytes_per_sample;
    EXPECT_DOUBLE_EQ(l.stash_bytes_per_sample, l.activation_bytes_per_sample);
    params += l.parameter_bytes;
  }
  EXPECT_NEAR(fwd_s, fwd_ms * 1e-3 / kBatch, 1e-12);
  EXPECT_NEAR(bwd_s, bwd_ms * 1e-3 / kBatch, 1e-12);
  EXPECT_NEAR(act, activation / kBatch, 1e-6);
  EXPECT_EQ(params, parameters);
  EXPECT_EQ(params, 4 * 138357544LL);  // VGG-16's published parameter count, fp32
}

TEST(PipedreamProfile, InputNodesAreFreeUnlessAsked) {
  const std::string text = read_profile("vgg16.graph.txt");
  const ModelSpec spec = model_from_pipedream(text, 128, false, "vgg16.graph.txt");
  const ModelLayer& input = spec.layers.at(positions(spec).at("node1"));
  ASSERT_EQ(input.name.substr(0, 11), "node1 Input");
  EXPECT_EQ(spec.layers.front().name, input.name);  // the source comes first
  EXPECT_EQ(input.fwd.seconds_per_sample, 0);
  EXPECT_EQ(input.bwd.seconds_per_sample, 0);

  const ModelSpec costed = model_from_pipedream(text, 128, true, "vgg16.graph.txt");
  EXPECT_DOUBLE_EQ(costed.layers.front().fwd.seconds_per_sample, 17.972e-3 / 128);
}

TEST(PipedreamProfile, Resnet50HasBranches) {
  const ModelSpec spec =
      model_from_pipedream(read_profile("resnet50.graph.txt"), 128, false, "resnet50");
  int branching = 0;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    if (spec.layers[i].consumers.size() > 1) ++branching;
    for (int c : spec.layers[i].consumers) EXPECT_GT(c, static_cast<int>(i));
  }
  EXPECT_GT(branching, 0);
}

TEST(PipedreamProfile, EveryShippedProfileParses) {
  for (const char* name : {"alexnet", "gnmt", "resnet50", "vgg16"}) {
    const ModelSpec spec =
        model_from_pipedream(read_profile(std::string(name) + ".graph.txt"), 64, false, name);
    EXPECT_GT(spec.layers.size(), 10u) << name;
  }
  // GNMT's LSTMs list several outputs; their sizes add up.
  const ModelSpec gnmt = model_from_pipedream(read_profile("gnmt.graph.txt"), 1, false, "gnmt");
  const ModelLayer& lstm = gnmt.layers.at(positions(gnmt).at("node7"));
  EXPECT_DOUBLE_EQ(lstm.activation_bytes_per_sample, 6291456.0 + 2 * 131072.0);
}

constexpr char kGood[] =
    "node1 -- Input -- forward_compute_time=1.0, backward_compute_time=0.0, "
    "activation_size=8.0, parameter_size=0.0\n"
    "node3 -- B -- forward_compute_time=2.0, backward_compute_time=4.0, "
    "activation_size=16.0, parameter_size=4.0\n"
    "node2 -- A -- x -- forward_compute_time=2.0, backward_compute_time=4.0, "
    "activation_size=16.0, parameter_size=4.0\n"
    "\tnode1 -- node2\n"
    "\tnode1 -- node3\n"
    "\tnode2 -- node3\n";

TEST(PipedreamProfile, SmallGraph) {
  const ModelSpec spec = model_from_pipedream(kGood, 2, false, "small");
  ASSERT_EQ(spec.layers.size(), 3u);
  EXPECT_EQ(spec.layers[0].name, "node1 Input");
  EXPECT_EQ(spec.layers[1].name, "node2 A -- x");  // " -- " inside a description
  EXPECT_EQ(spec.layers[2].name, "node3 B");
  EXPECT_EQ(spec.layers[0].consumers, (std::vector<int>{1, 2}));
  EXPECT_EQ(spec.layers[1].consumers, std::vector<int>{2});
  EXPECT_DOUBLE_EQ(spec.layers[1].fwd.seconds_per_sample, 1e-3);
  EXPECT_DOUBLE_EQ(spec.layers[1].activation_bytes_per_sample, 8);
  EXPECT_EQ(spec.layers[1].parameter_bytes, 4);
}

TEST(PipedreamProfile, MalformedLineNamesFileAndLine) {
  const std::string text = std::string(kGood) + "node4 -- C -- forward_compute_time=1.0\n";
  const std::string msg = input_error([&] { model_from_pipedream(text, 1, false, "p.txt"); });
  EXPECT_NE(msg.find("p.txt:7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("backward_compute_time"), std::string::npos) << msg;

  const std::string junk = std::string(kGood) + "\n\nwhat is this\n";
  const std::string msg2 = input_error([&] { model_from_pipedream(junk, 1, false, "p.txt"); });
  EXPECT_NE(msg2.find("p.txt:9:"), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("malformed"), std::string::npos) << msg2;

  const std::string nan =
      "node1 -- A -- forward_compute_time=abc, backward_compute_time=0, "
      "activation_size=0, parameter_size=0\n";
  const std::string msg3 = input_error([&] { model_from_pipedream(nan, 1, false, "p.txt"); });
  EXPECT_NE(msg3.find("p.txt:1: forward_compute_time"), std::string::npos) << msg3;
}

TEST(PipedreamProfile, UnknownNodeInEdge) {
  const std::string text = std::string(kGood) + "\tnode3 -- node9\n";
  const std::string msg = input_error([&] { model_from_pipedream(text, 1, false, "p.txt"); });
  EXPECT_NE(msg.find("p.txt:7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node9"), std::string::npos) << msg;
}

TEST(PipedreamProfile, Cycle) {
  const std::string text = std::string(kGood) + "\tnode3 -- node2\n";
  const std::string msg = input_error([&] { model_from_pipedream(text, 1, false, "p.txt"); });
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("p.txt:6"), std::string::npos) << msg;  // first edge on the cycle
  EXPECT_NE(msg.find("node2 -> node3 -> node2"), std::string::npos) << msg;
}

TEST(PipedreamProfile, DuplicateNegativeAndEmpty) {
  const std::string dup = std::string(kGood) +
                          "node2 -- A -- forward_compute_time=2.0, backward_compute_time=4.0, "
                          "activation_size=16.0, parameter_size=4.0\n";
  const std::string msg = input_error([&] { model_from_pipedream(dup, 1, false, "p.txt"); });
  EXPECT_NE(msg.find("p.txt:7: duplicate node node2"), std::string::npos) << msg;

  const std::string neg =
      "node1 -- A -- forward_compute_time=1, backward_compute_time=1, "
      "activation_size=-5, parameter_size=0\n";
  const std::string msg2 = input_error([&] { model_from_pipedream(neg, 1, false, "p.txt"); });
  EXPECT_NE(msg2.find("p.txt:1: activation_size: negative"), std::string::npos) << msg2;

  // 1e308 ms is finite, but two of them are not: the simulated times would be infinite.
  const std::string huge =
      "node1 -- A -- forward_compute_time=1e308, backward_compute_time=1, "
      "activation_size=5, parameter_size=0\n";
  const std::string msg4 = input_error([&] { model_from_pipedream(huge, 1, false, "p.txt"); });
  EXPECT_NE(msg4.find("p.txt:1: forward_compute_time: 1e308 is larger than 1e15"),
            std::string::npos)
      << msg4;

  const std::string msg3 = input_error([&] { model_from_pipedream("\n  \n", 1, false, "e"); });
  EXPECT_NE(msg3.find("empty profile"), std::string::npos) << msg3;
}

// --- zoo -------------------------------------------------------------------------------

proto::Zoo gpt_zoo() {
  proto::Zoo zoo;
  zoo.set_name("gpt");
  zoo.set_layers(2);
  zoo.set_hidden(64);
  zoo.set_seq_len(16);
  zoo.set_heads(4);
  zoo.set_vocab(100);
  zoo.set_efficiency(0.4);
  return zoo;
}

TEST(Zoo, GptBlocks) {
  const ModelSpec spec = model_from_zoo(gpt_zoo());
  ASSERT_EQ(spec.layers.size(), 4u);  // embedding, 2 blocks, lm_head
  EXPECT_EQ(spec.layers[0].name, "embedding");
  EXPECT_EQ(spec.layers[1].name, "block_0");
  EXPECT_EQ(spec.layers[3].name, "lm_head");
  EXPECT_DOUBLE_EQ(spec.efficiency, 0.4);

  // s = 16, h = 64: 24 * 16 * 64^2 + 4 * 16^2 * 64 = 1,572,864 + 65,536.
  const ModelLayer& block = spec.layers[1];
  EXPECT_DOUBLE_EQ(block.fwd.flops_per_sample, 1638400);
  EXPECT_DOUBLE_EQ(block.bwd.flops_per_sample, 2 * 1638400);
  EXPECT_EQ(block.fwd.seconds_per_sample, 0);
  // (12 * 64^2 + 13 * 64) * 4 bytes = (49,152 + 832) * 4.
  EXPECT_EQ(block.parameter_bytes, 199936);
  EXPECT_DOUBLE_EQ(block.activation_bytes_per_sample, 16 * 64 * 2);
  // 16 * 64 * (34 + 5 * 4 * 16 / 64) = 1024 * 39.
  EXPECT_DOUBLE_EQ(block.stash_bytes_per_sample, 39936);

  EXPECT_EQ(spec.layers[0].parameter_bytes, (100 + 16) * 64 * 4);
  EXPECT_EQ(spec.layers[0].fwd.flops_per_sample, 0);
  EXPECT_DOUBLE_EQ(spec.layers[3].fwd.flops_per_sample, 2.0 * 16 * 64 * 100);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(spec.layers[i].consumers, std::vector<int>{i + 1});
  EXPECT_TRUE(spec.layers[3].consumers.empty());
}

TEST(Zoo, Vgg16PublishedFigures) {
  proto::Zoo zoo;
  zoo.set_name("vgg16");
  const ModelSpec spec = model_from_zoo(zoo);
  ASSERT_EQ(spec.layers.size(), 21u);  // 13 conv, 5 pool, 3 fc
  EXPECT_EQ(spec.layers[0].name, "conv1_1");
  EXPECT_EQ(spec.layers[2].name, "pool1");
  EXPECT_EQ(spec.layers[17].name, "pool5");
  EXPECT_EQ(spec.layers[20].name, "fc8");
  double flops = 0;
  int64_t params = 0;
  for (const ModelLayer& l : spec.layers) {
    flops += l.fwd.flops_per_sample;
    params += l.parameter_bytes;
  }
  // Simonyan & Zisserman's configuration D: 138,357,544 parameters; ~15.47 GMACs per
  // 224x224 image (2 FLOPs per multiply-add).
  EXPECT_EQ(params, 4 * 138357544LL);
  EXPECT_NEAR(flops, 2 * 15.47e9, 0.01 * 2 * 15.47e9);
  // pool5 output: 512 x 7 x 7 fp32.
  EXPECT_DOUBLE_EQ(spec.layers[17].activation_bytes_per_sample, 512 * 7 * 7 * 4);
  EXPECT_DOUBLE_EQ(spec.layers[20].activation_bytes_per_sample, 1000 * 4);

  zoo.set_image_size(100);
  const std::string msg = input_error([&] { model_from_zoo(zoo); });
  EXPECT_EQ(msg.rfind("model.zoo.image_size: ", 0), 0u) << msg;
}

proto::Zoo resnet_zoo(int depth, int image, int classes) {
  proto::Zoo zoo;
  zoo.set_name("resnet");
  if (depth != 0) zoo.set_layers(depth);  // 0: unset
  zoo.set_image_size(image);
  zoo.set_num_classes(classes);
  return zoo;
}

struct Totals {
  double flops = 0;
  int64_t parameter_bytes = 0;
};

Totals totals(const ModelSpec& spec) {
  Totals t;
  for (const ModelLayer& l : spec.layers) {
    t.flops += l.fwd.flops_per_sample;
    t.parameter_bytes += l.parameter_bytes;
  }
  return t;
}

TEST(Zoo, Resnet18PublishedFigures) {
  // ImageNet: torchvision's resnet18 has 11,689,512 parameters (BatchNorm weights and
  // biases included); He et al. 2016 table 1: 1.8 G multiply-adds (1.82 G counted).
  const ModelSpec imagenet = model_from_zoo(resnet_zoo(/*unset: 18*/ 0, 224, 1000));
  ASSERT_EQ(imagenet.layers.size(), 10u);  // stem, 8 BasicBlocks, head
  EXPECT_EQ(imagenet.layers[0].name, "stem");
  EXPECT_EQ(imagenet.layers[1].name, "layer1_0");
  EXPECT_EQ(imagenet.layers[2].name, "layer1_1");
  EXPECT_EQ(imagenet.layers[3].name, "layer2_0");
  EXPECT_EQ(imagenet.layers[8].name, "layer4_1");
  EXPECT_EQ(imagenet.layers[9].name, "head");
  const Totals i18 = totals(imagenet);
  EXPECT_EQ(i18.parameter_bytes, 4 * 11689512LL);
  EXPECT_NEAR(i18.flops / 2, 1.82e9, 0.02 * 1.82e9);
  // Stem output 64 x 56 x 56, layer4 output 512 x 7 x 7, logits, all fp32.
  EXPECT_DOUBLE_EQ(imagenet.layers[0].activation_bytes_per_sample, 64 * 56 * 56 * 4);
  EXPECT_DOUBLE_EQ(imagenet.layers[8].activation_bytes_per_sample, 512 * 7 * 7 * 4);
  EXPECT_DOUBLE_EQ(imagenet.layers[9].activation_bytes_per_sample, 1000 * 4);
  // A projection block (layer2_0) keeps one tensor more than an identity block.
  EXPECT_DOUBLE_EQ(imagenet.layers[2].stash_bytes_per_sample, 4 * 64 * 56 * 56 * 4);
  EXPECT_DOUBLE_EQ(imagenet.layers[3].stash_bytes_per_sample, 5 * 128 * 28 * 28 * 4);
  for (const ModelLayer& l : imagenet.layers) {
    EXPECT_DOUBLE_EQ(l.bwd.flops_per_sample, 2 * l.fwd.flops_per_sample) << l.name;
  }

  // CIFAR (32 x 32, 3x3 stem, no max pool; kuangliu/pytorch-cifar): 11,173,962 parameters,
  // 0.56 G multiply-adds.
  const ModelSpec cifar = model_from_zoo(resnet_zoo(18, 32, 10));
  ASSERT_EQ(cifar.layers.size(), 10u);
  const Totals c18 = totals(cifar);
  EXPECT_EQ(c18.parameter_bytes, 4 * 11173962LL);
  EXPECT_NEAR(c18.flops / 2, 0.56e9, 0.02 * 0.56e9);
  EXPECT_DOUBLE_EQ(cifar.layers[0].activation_bytes_per_sample, 64 * 32 * 32 * 4);
  EXPECT_DOUBLE_EQ(cifar.layers[8].activation_bytes_per_sample, 512 * 4 * 4 * 4);

  // ResNet-34 ImageNet: 21,797,672 parameters (torchvision), 3.6 G multiply-adds.
  const ModelSpec r34 = model_from_zoo(resnet_zoo(34, 224, 1000));
  ASSERT_EQ(r34.layers.size(), 18u);  // stem, 16 BasicBlocks, head
  EXPECT_EQ(r34.layers[16].name, "layer4_2");
  const Totals i34 = totals(r34);
  EXPECT_EQ(i34.parameter_bytes, 4 * 21797672LL);
  EXPECT_NEAR(i34.flops / 2, 3.6e9, 0.02 * 3.6e9);

  // width_scale scales every channel count: 1/8 of ResNet-18 has about 1/64 the convs.
  proto::Zoo narrow = resnet_zoo(18, 32, 10);
  narrow.set_width_scale(0.125);
  const Totals n18 = totals(model_from_zoo(narrow));
  EXPECT_LT(n18.parameter_bytes, c18.parameter_bytes / 50);
  EXPECT_GT(n18.parameter_bytes, c18.parameter_bytes / 80);
}

TEST(Zoo, ResnetErrorsNameTheField) {
  for (int depth : {50, 20, -1}) {
    const std::string msg = input_error([&] { model_from_zoo(resnet_zoo(depth, 32, 10)); });
    EXPECT_EQ(msg.rfind("model.zoo.layers: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("18 or 34"), std::string::npos) << msg;
  }
  for (int image : {36, 0, 96 + 16, -32}) {
    const std::string msg = input_error([&] { model_from_zoo(resnet_zoo(18, image, 10)); });
    EXPECT_EQ(msg.rfind("model.zoo.image_size: ", 0), 0u) << image << ": " << msg;
  }
  EXPECT_NO_THROW(model_from_zoo(resnet_zoo(18, 96, 10)));  // ImageNet stem, 96 = 3 x 32
  EXPECT_NO_THROW(model_from_zoo(resnet_zoo(34, 64, 10)));  // CIFAR stem, 64 = 8 x 8
  proto::Zoo zoo = resnet_zoo(18, 32, 0);
  EXPECT_EQ(input_error([&] { model_from_zoo(zoo); }).rfind("model.zoo.num_classes: ", 0), 0u);
  zoo = resnet_zoo(18, 32, 10);
  zoo.set_width_scale(1.5);
  EXPECT_EQ(input_error([&] { model_from_zoo(zoo); }).rfind("model.zoo.width_scale: ", 0), 0u);
}

TEST(Zoo, Mlp) {
  proto::Zoo zoo;
  zoo.set_name("mlp");
  zoo.set_layers(3);
  zoo.set_hidden(10);
  zoo.set_input_dim(5);
  zoo.set_output_dim(2);
  const ModelSpec spec = model_from_zoo(zoo);
  ASSERT_EQ(spec.layers.size(), 3u);
  EXPECT_EQ(spec.layers[0].parameter_bytes, (5 + 1) * 10 * 4);
  EXPECT_EQ(spec.layers[1].parameter_bytes, (10 + 1) * 10 * 4);
  EXPECT_EQ(spec.layers[2].parameter_bytes, (10 + 1) * 2 * 4);
  EXPECT_DOUBLE_EQ(spec.layers[0].fwd.flops_per_sample, 2 * 5 * 10);
  EXPECT_DOUBLE_EQ(spec.layers[0].bwd.flops_per_sample, 4 * 5 * 10);
  EXPECT_DOUBLE_EQ(spec.layers[2].activation_bytes_per_sample, 2 * 4);
  EXPECT_DOUBLE_EQ(spec.efficiency, 0.5);  // the proto default

  zoo.set_layers(1);
  const ModelSpec one = model_from_zoo(zoo);
  ASSERT_EQ(one.layers.size(), 1u);
  EXPECT_EQ(one.layers[0].parameter_bytes, (5 + 1) * 2 * 4);
}

TEST(Zoo, ErrorsNameTheField) {
  proto::Zoo zoo = gpt_zoo();
  zoo.clear_hidden();
  EXPECT_EQ(input_error([&] { model_from_zoo(zoo); }).rfind("model.zoo.hidden: ", 0), 0u);
  zoo = gpt_zoo();
  zoo.set_seq_len(-3);
  EXPECT_EQ(input_error([&] { model_from_zoo(zoo); }).rfind("model.zoo.seq_len: ", 0), 0u);
  zoo = gpt_zoo();
  zoo.set_heads(5);
  EXPECT_EQ(input_error([&] { model_from_zoo(zoo); }).rfind("model.zoo.heads: ", 0), 0u);
  zoo = gpt_zoo();
  zoo.set_efficiency(0);
  EXPECT_EQ(input_error([&] { model_from_zoo(zoo); }).rfind("model.zoo.efficiency: ", 0), 0u);
  // A layer count with extra zeros is refused before millions of layers are built.
  zoo = gpt_zoo();
  zoo.set_layers(3838257);
  EXPECT_EQ(input_error([&] { model_from_zoo(zoo); }).rfind("model.zoo.layers: at most ", 0), 0u);
  zoo.set_layers(100'000);
  EXPECT_EQ(model_from_zoo(zoo).layers.size(), 100'002u);  // embedding, blocks, head

  proto::Zoo mlp;
  mlp.set_name("mlp");
  mlp.set_layers(2);
  mlp.set_hidden(4);
  mlp.set_input_dim(4);
  EXPECT_EQ(input_error([&] { model_from_zoo(mlp); }).rfind("model.zoo.output_dim: ", 0), 0u);

  proto::Zoo unknown;
  unknown.set_name("bert");
  EXPECT_EQ(
      input_error([&] { model_from_zoo(unknown); }),
      "model.zoo.name: unknown zoo model 'bert' (known: gpt, transformer, vgg16, resnet, mlp)");
}

}  // namespace
}  // namespace pipetwin
