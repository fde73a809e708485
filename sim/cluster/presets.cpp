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

// Collectives as NCCL picks and times them (docs/network.md).
void set_nccl(proto::Cluster& c) { c.mutable_collectives()->set_model(proto::Collectives::NCCL); }

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
constexpr int kB200Sms = 148;  // Blackwell B200 (CUTLASS's and FlashAttention's kernels)
constexpr int kB300Sms = 160;  // Blackwell Ultra: "up to 160 SMs" (NVIDIA's technical blog)
// Fitted to one 22B GPT block's forward (0.7669, bench/published.py --gemm-shapes).
constexpr double kA100PeakFraction = 0.77;
constexpr double kH100PeakFraction = 0.74;
// Blackwell: fitted once, to MLPerf Training v5.0's 256-GB200 Llama 3.1 405B step in FP8
// (bench/published.py --only-2026: 0.5516).
constexpr double kBlackwellPeakFraction = 0.552;

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
  set_nccl(c);
  return c;
}

proto::Cluster dgx_h100() {
  // H100 SXM5 80GB: 989 TFLOPS dense BF16 (1,979 is with sparsity).
  proto::Cluster c = make("dgx-h100", 8, "H100-SXM5-80GB", 989, 80);
  c.mutable_gpu()->set_peak_tflops_fp8(1979);                // dense FP8 (3,958 sparse)
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
  set_nccl(c);
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

proto::Cluster h100_roce_24k() {
  // Llama 3's 24K-GPU training cluster ("The Llama 3 Herd of Models", arXiv:2407.21783, section
  // 3.3.1): 8 H100s per server on NVLink, one 400 Gb/s RoCE NIC per GPU, a three-layer Clos in
  // pods of 3,072 GPUs (384 servers) at full bisection, oversubscribed 1:7 above the pods.
  proto::Cluster c = dgx_h100();
  c.set_preset("h100-roce-24k");
  proto::Link* inter = c.mutable_inter_node();
  inter->set_fabric(proto::FAT_TREE);
  inter->set_nodes_per_leaf(384);
  inter->set_oversubscription(7);
  return c;
}

proto::Cluster hgx_h800() {
  // H800 SXM5 80GB, the H100 for the Chinese market: the H100's 989 TFLOPS dense BF16 and
  // HBM3, NVLink cut to 400 GB/s total per GPU = 200 each way. The nodes DeepSeek-V3 trained
  // on (its report, section 3.1): 8 GPUs over NVLink and NVSwitch, one 400 Gb/s InfiniBand
  // NIC per GPU (50 GB/s each way).
  proto::Cluster c = make("hgx-h800", 8, "H800-SXM5-80GB", 989, 80);
  c.mutable_gpu()->set_peak_tflops_fp8(1979);
  c.mutable_gpu()->set_memory_bandwidth_gbytes_per_s(3350);
  set_gemm_curve(c, kH100Sms, kH100PeakFraction);
  set_link(c.mutable_intra_node(), 200, 3);
  c.mutable_intra_node()->set_kind(proto::NVSWITCH);
  set_link(c.mutable_inter_node(), 50, 5);
  c.mutable_inter_node()->set_nics_per_node(0);  // 0 = one per GPU
  set_link(c.mutable_host_link(), kPcieGen5x16, 2);
  c.mutable_host_link()->set_gpus_per_switch(2);
  c.set_host_memory_gib(2048);
  set_nccl(c);
  return c;
}

// Blackwell (dense tensor-core peaks, NVIDIA's "non-sparse" figures in its DGX Cloud
// benchmarking reference, docs/clusters.md): FP8 and MXFP8 at twice BF16, NVFP4 at four times
// (B200, GB200) or six times (GB300). NVLink 5 through NVSwitch: 1.8 TB/s per GPU = 900 GB/s
// each way, 18 links.
void set_blackwell(proto::Cluster& c, double bf16, double nvfp4, double hbm_gbytes_per_s, int sms) {
  proto::Gpu* g = c.mutable_gpu();
  g->set_peak_tflops(bf16);
  g->set_peak_tflops_fp8(2 * bf16);
  g->set_peak_tflops_mxfp8(2 * bf16);
  g->set_peak_tflops_nvfp4(nvfp4);
  g->set_memory_bandwidth_gbytes_per_s(hbm_gbytes_per_s);
  set_gemm_curve(c, sms, kBlackwellPeakFraction);
  set_link(c.mutable_intra_node(), 900, 3);
  c.mutable_intra_node()->set_kind(proto::NVSWITCH);
}

proto::Cluster dgx_b200() {
  // DGX B200: 8 B200 of 180 GB HBM3e at 7.7 TB/s; 8 ConnectX-7 400 Gb/s NICs (rail), PCIe Gen5.
  proto::Cluster c = make("dgx-b200", 8, "B200-180GB", 2250, 180e9 / (1 << 30));
  set_blackwell(c, 2250, 9000, 7700, kB200Sms);
  set_link(c.mutable_inter_node(), 50, 5);
  c.mutable_inter_node()->set_nics_per_node(0);  // 0 = one per GPU
  set_link(c.mutable_host_link(), kPcieGen5x16, 2);
  c.mutable_host_link()->set_gpus_per_switch(2);
  c.set_host_memory_gib(2048);  // 2 TB DDR5 (up to 4 TB)
  set_nccl(c);
  return c;
}

// A GB200/GB300 NVL72 rack's compute tray: 2 Grace-Blackwell superchips (4 GPUs), 18 trays per
// NVLink domain. Each Grace reaches its 2 GPUs over NVLink-C2C (900 GB/s both ways = 450 each
// way) and holds 480 GB of LPDDR5X; one scale-out NIC per GPU.
void set_nvl72_tray(proto::Cluster& c, double nic_gbytes_per_s) {
  c.set_nvlink_domain_nodes(18);
  set_link(c.mutable_inter_node(), nic_gbytes_per_s, 5);
  c.mutable_inter_node()->set_nics_per_node(0);  // 0 = one per GPU
  set_link(c.mutable_host_link(), 450, 1);
  c.mutable_host_link()->set_gpus_per_switch(2);
  c.set_host_memory_gib(2 * 480e9 / (1 << 30));
  set_nccl(c);
}

proto::Cluster gb200_nvl72() {
  // GB200: 186 GB HBM3e at 8 TB/s; 4 ConnectX-7 400 Gb/s per tray (MLPerf v5.0 system file).
  proto::Cluster c = make("gb200-nvl72", 4, "GB200-186GB", 2450, 189471.0 / 1024);
  set_blackwell(c, 2450, 9800, 8000, kB200Sms);
  set_nvl72_tray(c, 50);
  return c;
}

proto::Cluster gb300_nvl72() {
  // GB300 (Blackwell Ultra): 279 GB HBM3e at 8 TB/s, NVFP4 at 1.5x GB200's; 4 ConnectX-8
  // 800 Gb/s per tray (MLPerf v5.1 system file).
  proto::Cluster c = make("gb300-nvl72", 4, "GB300-279GB", 2450, 284208.0 / 1024);
  set_blackwell(c, 2450, 14700, 8000, kB300Sms);
  set_nvl72_tray(c, 100);
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
  set_nccl(c);
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
    {"dgx-a100", dgx_a100},       {"dgx-h100", dgx_h100},           {"dgx-h200", dgx_h200},
    {"hgx-h800", hgx_h800},       {"dgx-b200", dgx_b200},           {"gb200-nvl72", gb200_nvl72},
    {"gb300-nvl72", gb300_nvl72}, {"h100-roce-24k", h100_roce_24k}, {"pcie-8xa100", pcie_8xa100},
    {"cpu-host", cpu_host},
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
