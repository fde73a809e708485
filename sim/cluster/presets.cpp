// Named clusters. Every number is a public figure (datasheet, user guide or PCIe spec) and
// docs/clusters.md gives its source; latencies are approximate, and fields the scenario
// writes next to `preset` override these. Bandwidths are per direction, GB/s = 1e9 B/s.
#include "sim/cluster/presets.h"

namespace pipetwin {
namespace {

// PCIe x16 link rate after 128b/130b line encoding, before packet overheads:
// lanes * GT/s * 128/130 / 8 bits. Measured pinned copies reach ~80% of it.
constexpr double kPcieGen4x16 = 16 * 16.0 * 128 / 130 / 8;  // 31.5 GB/s
constexpr double kPcieGen5x16 = 16 * 32.0 * 128 / 130 / 8;  // 63.0 GB/s

void set_link(proto::Link* link, double gbytes_per_s, double latency_us) {
  link->set_bandwidth_gbytes_per_s(gbytes_per_s);
  link->set_latency_us(latency_us);
}

proto::Cluster make(const std::string& name, int gpus_per_node, const std::string& gpu_name,
                    double peak_tflops, double memory_gib) {
  proto::Cluster c;
  c.set_preset(name);
  c.set_nodes(1);
  c.set_gpus_per_node(gpus_per_node);
  c.mutable_gpu()->set_name(gpu_name);
  c.mutable_gpu()->set_peak_tflops(peak_tflops);
  c.mutable_gpu()->set_memory_gib(memory_gib);
  return c;
}

// GEMM efficiency by shape (docs/models.md): the multiprocessors of the datasheet; 128 x 128
// tiles, the shape that times the H100 measurements of bench/data best; the fraction of the
// peak a whole wave reaches, fitted per GPU type (A100: Megatron-LM's 1.7B GPT; H100, and
// the H800 and H200 that share its tensor cores and clocks: bench/data's cuBLAS GEMMs).
void set_gemm_curve(proto::Cluster& c, int sm_count, double peak_fraction) {
  proto::GemmEfficiency* g = c.mutable_gpu()->mutable_gemm_efficiency();
  g->set_sm_count(sm_count);
  g->set_peak_fraction(peak_fraction);
}
constexpr int kA100Sms = 108;  // NVIDIA A100 Tensor Core GPU Architecture whitepaper
constexpr int kH100Sms = 132;  // NVIDIA H100 Tensor Core GPU Architecture whitepaper (SXM5)
// Fitted to one 22B GPT block's forward (0.7121, bench/published.py --gemm-shapes).
constexpr double kA100PeakFraction = 0.71;
constexpr double kH100PeakFraction = 0.69;

proto::Cluster dgx_a100() {
  // A100 SXM4 80GB: 312 TFLOPS dense BF16 (624 is with 2:4 sparsity).
  proto::Cluster c = make("dgx-a100", 8, "A100-SXM4-80GB", 312, 80);
  c.mutable_gpu()->set_memory_bandwidth_gbytes_per_s(2039);  // HBM2e
  set_gemm_curve(c, kA100Sms, kA100PeakFraction);
  // NVLink 3 through NVSwitch: 600 GB/s total per GPU = 300 each way.
  set_link(c.mutable_intra_node(), 300, 3);
  c.mutable_intra_node()->set_kind(proto::NVSWITCH);
  // One 200 Gb/s HDR InfiniBand ConnectX-6 per GPU (rail): 25 GB/s each way.
  set_link(c.mutable_inter_node(), 25, 5);
  c.mutable_inter_node()->set_nics_per_node(0);  // 0 = one per GPU
  // 4 PCIe Gen4 switches, each with 2 GPUs (and 2 NICs) behind it.
  set_link(c.mutable_host_link(), kPcieGen4x16, 2);
  c.mutable_host_link()->set_gpus_per_switch(2);
  c.set_host_memory_gib(1024);  // 1 TB DDR4 (2 TB optional)
  return c;
}

proto::Cluster dgx_h100() {
  // H100 SXM5 80GB: 989 TFLOPS dense BF16 (1,979 is with sparsity).
  proto::Cluster c = make("dgx-h100", 8, "H100-SXM5-80GB", 989, 80);
  c.mutable_gpu()->set_memory_bandwidth_gbytes_per_s(3350);  // HBM3
  set_gemm_curve(c, kH100Sms, kH100PeakFraction);
  // NVLink 4 through NVSwitch: 900 GB/s total per GPU = 450 each way.
  set_link(c.mutable_intra_node(), 450, 3);
  c.mutable_intra_node()->set_kind(proto::NVSWITCH);
  // One 400 Gb/s NDR ConnectX-7 per GPU (rail): 50 GB/s each way.
  set_link(c.mutable_inter_node(), 50, 5);
  c.mutable_inter_node()->set_nics_per_node(0);  // 0 = one per GPU
  // 4 PCIe Gen5 switches, each with 2 GPUs behind it.
  set_link(c.mutable_host_link(), kPcieGen5x16, 2);
  c.mutable_host_link()->set_gpus_per_switch(2);
  c.set_host_memory_gib(2048);  // 2 TB DDR5
  return c;
}

proto::Cluster dgx_h200() {
  // H200 SXM 141GB: the H100's tensor cores (989 TFLOPS dense BF16) with 141 GB of HBM3e at
  // 4.8 TB/s; the DGX H200 keeps the DGX H100's NVLink 4, NICs and PCIe.
  proto::Cluster c = dgx_h100();
  c.set_preset("dgx-h200");
  c.mutable_gpu()->set_name("H200-SXM-141GB");
  c.mutable_gpu()->set_memory_gib(141);
  c.mutable_gpu()->set_memory_bandwidth_gbytes_per_s(4800);
  return c;
}

proto::Cluster hgx_h800() {
  // H800 SXM5 80GB, the H100 for the Chinese market: the H100's 989 TFLOPS dense BF16 and
  // HBM3, NVLink cut to 400 GB/s total per GPU = 200 each way. The nodes DeepSeek-V3 trained
  // on (its report, section 3.1): 8 GPUs over NVLink and NVSwitch, one 400 Gb/s InfiniBand
  // NIC per GPU (50 GB/s each way).
  proto::Cluster c = make("hgx-h800", 8, "H800-SXM5-80GB", 989, 80);
  c.mutable_gpu()->set_memory_bandwidth_gbytes_per_s(3350);
  set_gemm_curve(c, kH100Sms, kH100PeakFraction);
  set_link(c.mutable_intra_node(), 200, 3);
  c.mutable_intra_node()->set_kind(proto::NVSWITCH);
  set_link(c.mutable_inter_node(), 50, 5);
  c.mutable_inter_node()->set_nics_per_node(0);  // 0 = one per GPU
  set_link(c.mutable_host_link(), kPcieGen5x16, 2);
  c.mutable_host_link()->set_gpus_per_switch(2);
  c.set_host_memory_gib(2048);
  return c;
}

proto::Cluster pcie_8xa100() {
  // A100 PCIe 80GB: same 312 TFLOPS dense BF16 peak as SXM (lower power limit, so real
  // kernels may run somewhat slower; calibrate).
  proto::Cluster c = make("pcie-8xa100", 8, "A100-PCIe-80GB", 312, 80);
  c.mutable_gpu()->set_memory_bandwidth_gbytes_per_s(1935);  // HBM2e
  set_gemm_curve(c, kA100Sms, kA100PeakFraction);
  // No NVLink: GPU-to-GPU traffic is PCIe Gen4 x16 peer-to-peer through the shared switch.
  set_link(c.mutable_intra_node(), kPcieGen4x16, 2);
  c.mutable_intra_node()->set_kind(proto::PCIE_SWITCH);
  // Assumption: one 200 Gb/s HDR NIC per node, shared by its 8 GPUs (the simgrid engine
  // divides it among concurrent flows). Only matters when a scenario raises `nodes`.
  set_link(c.mutable_inter_node(), 25, 5);
  c.mutable_inter_node()->set_nics_per_node(1);
  // Assumption: 2 PCIe switches with 4 GPUs behind each.
  set_link(c.mutable_host_link(), kPcieGen4x16, 2);
  c.mutable_host_link()->set_gpus_per_switch(4);
  c.set_host_memory_gib(1024);  // assumption: a typical 8-GPU PCIe server
  return c;
}

proto::Cluster cpu_host() {
  // Rough placeholders for LibTorch CPU ranks on one machine, meant to be replaced by
  // `pipetwin calibrate`: 4 ranks, ~1 TFLOP/s, 16 GiB each, Gloo over loopback.
  proto::Cluster c = make("cpu-host", 4, "cpu", 1, 16);
  set_link(c.mutable_intra_node(), 5, 20);
  set_link(c.mutable_inter_node(), 1.25, 50);  // 10 GbE, if a scenario adds nodes
  set_link(c.mutable_host_link(), 10, 1);      // "offload" on a CPU is a memcpy
  c.set_host_memory_gib(64);
  return c;
}

// In documentation order: the GPU presets first.
struct Preset {
  const char* name;
  proto::Cluster (*make)();
};
constexpr Preset kPresets[] = {
    {"dgx-a100", dgx_a100}, {"dgx-h100", dgx_h100},       {"dgx-h200", dgx_h200},
    {"hgx-h800", hgx_h800}, {"pcie-8xa100", pcie_8xa100}, {"cpu-host", cpu_host},
};

}  // namespace

std::optional<proto::Cluster> cluster_preset(const std::string& name) {
  for (const Preset& p : kPresets) {
    if (name == p.name) return p.make();
  }
  return std::nullopt;
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

}  // namespace pipetwin
