// Cluster presets: every field filled with a positive number, and a few figures that
// the docs promise (docs/clusters.md) pinned so that an edit is a deliberate one.
#include "sim/cluster/presets.h"

#include <gtest/gtest.h>

#include <string>

namespace pipetwin {
namespace {

void expect_link_complete(const proto::Link& link, const std::string& what) {
  EXPECT_TRUE(link.has_bandwidth_gbytes_per_s()) << what;
  EXPECT_GT(link.bandwidth_gbytes_per_s(), 0) << what;
  EXPECT_TRUE(link.has_latency_us()) << what;
  EXPECT_GT(link.latency_us(), 0) << what;
}

TEST(ClusterPresets, EveryPresetSetsEveryField) {
  const auto names = cluster_preset_names();
  ASSERT_EQ(names.size(), 10u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::optional<proto::Cluster> c = cluster_preset(name);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->preset(), name);
    ASSERT_TRUE(c->has_nodes());
    EXPECT_EQ(c->nodes(), 1);
    ASSERT_TRUE(c->has_gpus_per_node());
    EXPECT_GT(c->gpus_per_node(), 0);
    ASSERT_TRUE(c->has_gpu());
    EXPECT_FALSE(c->gpu().name().empty());
    EXPECT_TRUE(c->gpu().has_peak_tflops());
    EXPECT_GT(c->gpu().peak_tflops(), 0);
    EXPECT_TRUE(c->gpu().has_memory_gib());
    EXPECT_GT(c->gpu().memory_gib(), 0);
    ASSERT_TRUE(c->has_intra_node());
    ASSERT_TRUE(c->has_inter_node());
    ASSERT_TRUE(c->has_host_link());
    expect_link_complete(c->intra_node(), "intra_node");
    expect_link_complete(c->inter_node(), "inter_node");
    expect_link_complete(c->host_link(), "host_link");
    // Every GPU preset times GEMMs by their shape; the CPU ranks have no such curve.
    if (name != "cpu-host") {
      const proto::GemmEfficiency& g = c->gpu().gemm_efficiency();
      EXPECT_GT(g.sm_count(), 0);
      EXPECT_GT(g.peak_fraction(), 0);
      EXPECT_LE(g.peak_fraction(), 1);
      EXPECT_GT(c->gpu().memory_bandwidth_gbytes_per_s(), 0);
    }
  }
}

TEST(ClusterPresets, KnownFigures) {
  const proto::Cluster a100 = *cluster_preset("dgx-a100");
  EXPECT_EQ(a100.gpus_per_node(), 8);
  EXPECT_DOUBLE_EQ(a100.gpu().peak_tflops(), 312);
  EXPECT_DOUBLE_EQ(a100.intra_node().bandwidth_gbytes_per_s(), 300);
  EXPECT_DOUBLE_EQ(a100.inter_node().bandwidth_gbytes_per_s(), 25);

  EXPECT_EQ(a100.intra_node().kind(), proto::NVSWITCH);
  EXPECT_EQ(a100.inter_node().nics_per_node(), 0);  // rail: one NIC per GPU
  EXPECT_EQ(a100.host_link().gpus_per_switch(), 2);
  EXPECT_EQ(cluster_preset("pcie-8xa100")->intra_node().kind(), proto::PCIE_SWITCH);
  EXPECT_EQ(cluster_preset("pcie-8xa100")->inter_node().nics_per_node(), 1);

  const proto::Cluster h100 = *cluster_preset("dgx-h100");
  EXPECT_DOUBLE_EQ(h100.intra_node().bandwidth_gbytes_per_s(), 450);
  EXPECT_DOUBLE_EQ(h100.inter_node().bandwidth_gbytes_per_s(), 50);
  EXPECT_GT(h100.gpu().peak_tflops(), 3 * a100.gpu().peak_tflops());

  // The H800: the H100's compute, NVLink cut to 400 GB/s in all, one NDR NIC per GPU
  // (DeepSeek-V3's report, section 3.1).
  const proto::Cluster h800 = *cluster_preset("hgx-h800");
  EXPECT_DOUBLE_EQ(h800.gpu().peak_tflops(), h100.gpu().peak_tflops());
  EXPECT_DOUBLE_EQ(h800.intra_node().bandwidth_gbytes_per_s(), 200);
  EXPECT_DOUBLE_EQ(h800.inter_node().bandwidth_gbytes_per_s(), 50);
  EXPECT_EQ(h800.inter_node().nics_per_node(), 0);

  // The H200: the H100 with 141 GB of HBM3e at 4.8 TB/s, in the DGX H100's box.
  const proto::Cluster h200 = *cluster_preset("dgx-h200");
  EXPECT_DOUBLE_EQ(h200.gpu().peak_tflops(), h100.gpu().peak_tflops());
  EXPECT_DOUBLE_EQ(h200.gpu().memory_gib(), 141);
  EXPECT_DOUBLE_EQ(h200.gpu().memory_bandwidth_gbytes_per_s(), 4800);
  EXPECT_DOUBLE_EQ(h200.intra_node().bandwidth_gbytes_per_s(), 450);
  EXPECT_EQ(h200.gpu().gemm_efficiency().sm_count(), 132);
  EXPECT_EQ(a100.gpu().gemm_efficiency().sm_count(), 108);

  // FP8 at twice BF16 from Hopper on; Blackwell's block-scaled MXFP8 at the same rate and NVFP4
  // at four times BF16 (six times on GB300); NVLink 5 at 900 GB/s each way.
  EXPECT_DOUBLE_EQ(h100.gpu().peak_tflops_fp8(), 1979);
  EXPECT_DOUBLE_EQ(h200.gpu().peak_tflops_fp8(), 1979);
  EXPECT_DOUBLE_EQ(h800.gpu().peak_tflops_fp8(), 1979);
  EXPECT_FALSE(h100.gpu().has_peak_tflops_mxfp8());
  EXPECT_FALSE(a100.gpu().has_peak_tflops_fp8());
  const proto::Cluster b200 = *cluster_preset("dgx-b200");
  EXPECT_EQ(b200.gpus_per_node(), 8);
  EXPECT_DOUBLE_EQ(b200.gpu().peak_tflops(), 2250);
  EXPECT_DOUBLE_EQ(b200.gpu().peak_tflops_fp8(), 4500);
  EXPECT_DOUBLE_EQ(b200.gpu().peak_tflops_mxfp8(), 4500);
  EXPECT_DOUBLE_EQ(b200.gpu().peak_tflops_nvfp4(), 9000);
  EXPECT_DOUBLE_EQ(b200.intra_node().bandwidth_gbytes_per_s(), 900);
  EXPECT_EQ(b200.nvlink_domain_nodes(), 1);
  for (const char* rack : {"gb200-nvl72", "gb300-nvl72"}) {
    const proto::Cluster c = *cluster_preset(rack);
    EXPECT_EQ(c.gpus_per_node(), 4) << rack;                             // a compute tray
    EXPECT_EQ(c.gpus_per_node() * c.nvlink_domain_nodes(), 72) << rack;  // a rack
    EXPECT_DOUBLE_EQ(c.gpu().peak_tflops(), 2450) << rack;
    EXPECT_DOUBLE_EQ(c.gpu().peak_tflops_mxfp8(), 4900) << rack;
    EXPECT_DOUBLE_EQ(c.intra_node().bandwidth_gbytes_per_s(), 900) << rack;
  }
  EXPECT_DOUBLE_EQ(cluster_preset("gb200-nvl72")->gpu().peak_tflops_nvfp4(), 9800);
  EXPECT_DOUBLE_EQ(cluster_preset("gb300-nvl72")->gpu().peak_tflops_nvfp4(), 14700);
  EXPECT_DOUBLE_EQ(cluster_preset("gb200-nvl72")->inter_node().bandwidth_gbytes_per_s(), 50);
  EXPECT_DOUBLE_EQ(cluster_preset("gb300-nvl72")->inter_node().bandwidth_gbytes_per_s(), 100);

  // Llama 3's RoCE cluster: pods of 3,072 GPUs, 1:7 above them.
  const proto::Cluster roce = *cluster_preset("h100-roce-24k");
  EXPECT_EQ(roce.inter_node().fabric(), proto::FAT_TREE);
  EXPECT_EQ(roce.inter_node().nodes_per_leaf() * roce.gpus_per_node(), 3072);
  EXPECT_DOUBLE_EQ(roce.inter_node().oversubscription(), 7);

  // The PCIe box has no NVLink: its GPUs talk at host-link speed.
  const proto::Cluster pcie = *cluster_preset("pcie-8xa100");
  EXPECT_DOUBLE_EQ(pcie.intra_node().bandwidth_gbytes_per_s(),
                   pcie.host_link().bandwidth_gbytes_per_s());
  EXPECT_LT(pcie.intra_node().bandwidth_gbytes_per_s(), 40);
}

TEST(ClusterPresets, UnknownNameIsNullopt) {
  EXPECT_FALSE(cluster_preset("dgx-b300").has_value());
  EXPECT_FALSE(cluster_preset("").has_value());
  EXPECT_FALSE(cluster_preset("DGX-A100").has_value());
}

}  // namespace
}  // namespace pipetwin
