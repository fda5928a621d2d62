// GPU tests of the runtime with hand-written kernels (testdata/*.cu built by
// nvcc). Skipped, with the reason, where cuInit fails (no GPU or driver).
#include "client/runtime/loaded_fusion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "client/runtime/driver_api.h"

namespace fusiond {
namespace runtime {
namespace {

std::string TestdataDir() {
  if (const char* env = std::getenv("FUSIOND_RUNTIME_TESTDATA")) return env;
  return FUSIOND_RUNTIME_TESTDATA_DIR;
}

// Device buffer with host round trips, for the tests.
class Buf {
 public:
  explicit Buf(size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(Cu().cuMemAlloc(&ptr_, bytes), CUDA_SUCCESS);
  }
  ~Buf() { Cu().cuMemFree(ptr_); }
  template <typename T>
  void Upload(const std::vector<T>& v) {
    ASSERT_EQ(Cu().cuMemcpyHtoD(ptr_, v.data(), v.size() * sizeof(T)), CUDA_SUCCESS);
  }
  CUdeviceptr get() const { return ptr_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_;
};

template <typename T>
std::vector<T> Download(CUdeviceptr p, size_t n) {
  std::vector<T> v(n);
  EXPECT_EQ(Cu().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Cu().cuMemcpyDtoH(v.data(), p, n * sizeof(T)), CUDA_SUCCESS);
  return v;
}

std::vector<float> RandomVector(size_t n, int seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Keeps the primary context current for the test body's own driver calls.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::Status gpu = CheckGpuAvailable();
    if (!gpu.ok()) GTEST_SKIP() << "no usable GPU: " << gpu.message();
    ASSERT_EQ(Cu().cuDeviceGet(&dev_, 0), CUDA_SUCCESS);
    ASSERT_EQ(Cu().cuDevicePrimaryCtxRetain(&ctx_, dev_), CUDA_SUCCESS);
    ASSERT_EQ(Cu().cuCtxSetCurrent(ctx_), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (ctx_ != nullptr) Cu().cuDevicePrimaryCtxRelease(dev_);
  }
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
};

void CheckCenter(const std::vector<float>& x, int64_t rows, int64_t cols, double alpha,
                 const std::vector<float>& out, float count) {
  double max_err = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    for (int64_t c = 0; c < cols; ++c) {
      double want = alpha * (x[r * cols + c] - sum / cols);
      double got = out[r * cols + c];
      ASSERT_FALSE(std::isnan(got)) << "unwritten output at " << r << "," << c;
      max_err = std::max(max_err, std::abs(got - want) / (1 + std::abs(want)));
    }
  }
  EXPECT_LT(max_err, 1e-4) << rows << "x" << cols;
  EXPECT_EQ(count, static_cast<float>((rows + 3) / 4)) << "first kernel's block count";
}

// One cubin, three shapes; two kernels, an intermediate, a zeroed workspace,
// a scalar and sizes; outputs poisoned with NaN before each run.
TEST_F(GpuTest, TwoKernelFusionAtThreeShapes) {
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadedFusion::Load(TestdataDir() + "/center");
  ASSERT_TRUE(f.ok()) << f.status();
  int seed = 1;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{5, 7}, {1000, 33}, {4096, 1024}}) {
    std::vector<float> x = RandomVector(rows * cols, seed++);
    Buf xd(x.size() * 4);
    xd.Upload(x);
    Buf out(x.size() * 4), count(4);
    ASSERT_EQ(Cu().cuMemsetD32(out.get(), 0x7fc00000u, x.size()), CUDA_SUCCESS);  // NaN
    ASSERT_EQ(Cu().cuMemsetD32(count.get(), 0x7fc00000u, 1), CUDA_SUCCESS);
    TensorArg xa{xd.get(), ElementType::kFloat32, {rows, cols}, {}};
    absl::Status s = (*f)->RunInto({RunArg::Tensor(xa), RunArg::Scalar(0.5)},
                                   {TensorArg{out.get(), ElementType::kFloat32, {rows, cols}, {}},
                                    TensorArg{count.get(), ElementType::kFloat32, {1}, {}}},
                                   RunOptions{nullptr, true});
    ASSERT_TRUE(s.ok()) << s;
    CheckCenter(x, rows, cols, 0.5, Download<float>(out.get(), x.size()),
                Download<float>(count.get(), 1)[0]);
    // Run() allocates the outputs itself; a second run also proves the
    // workspace is zeroed again (the count would double otherwise).
    absl::StatusOr<std::vector<OutputTensor>> outs =
        (*f)->Run({RunArg::Tensor(xa), RunArg::Scalar(-2.0)}, RunOptions{nullptr, true});
    ASSERT_TRUE(outs.ok()) << outs.status();
    ASSERT_EQ(outs->size(), 2u);
    EXPECT_EQ((*outs)[0].shape, (Shape{rows, cols}));
    CheckCenter(x, rows, cols, -2.0, Download<float>((*outs)[0].buffer.get(), x.size()),
                Download<float>((*outs)[1].buffer.get(), 1)[0]);
  }
}

TEST_F(GpuTest, NonContiguousInputIsMadeDense) {
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadedFusion::Load(TestdataDir() + "/center");
  ASSERT_TRUE(f.ok()) << f.status();
  const int64_t rows = 300, cols = 70;
  // x is the transpose of a [cols, rows] buffer: strides {1, rows}.
  std::vector<float> xt = RandomVector(rows * cols, 7);
  std::vector<float> x(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) x[r * cols + c] = xt[c * rows + r];
  Buf xd(xt.size() * 4);
  xd.Upload(xt);
  TensorArg xa{xd.get(), ElementType::kFloat32, {rows, cols}, {1, rows}};
  absl::StatusOr<std::vector<OutputTensor>> outs =
      (*f)->Run({RunArg::Tensor(xa), RunArg::Scalar(1.0)}, RunOptions{nullptr, true});
  ASSERT_TRUE(outs.ok()) << outs.status();
  CheckCenter(x, rows, cols, 1.0, Download<float>((*outs)[0].buffer.get(), x.size()),
              Download<float>((*outs)[1].buffer.get(), 1)[0]);
  // Row-strided (padded rows) too: inner axis dense.
  const int64_t pitch = cols + 9;
  std::vector<float> padded(rows * pitch, NAN);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) padded[r * pitch + c] = x[r * cols + c];
  Buf pd(padded.size() * 4);
  pd.Upload(padded);
  TensorArg pa{pd.get(), ElementType::kFloat32, {rows, cols}, {pitch, 1}};
  outs = (*f)->Run({RunArg::Tensor(pa), RunArg::Scalar(1.0)}, RunOptions{nullptr, true});
  ASSERT_TRUE(outs.ok()) << outs.status();
  CheckCenter(x, rows, cols, 1.0, Download<float>((*outs)[0].buffer.get(), x.size()),
              Download<float>((*outs)[1].buffer.get(), 1)[0]);
}

TEST_F(GpuTest, CooperativeKernelWithGridBarrier) {
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadedFusion::Load(TestdataDir() + "/coop");
  ASSERT_TRUE(f.ok()) << f.status();
  for (int64_t n : {int64_t{100}, int64_t{1} << 20, int64_t{3000001}}) {
    std::vector<float> x = RandomVector(n, 3);
    Buf xd(n * 4);
    xd.Upload(x);
    absl::StatusOr<std::vector<OutputTensor>> outs = (*f)->Run(
        {RunArg::Tensor({xd.get(), ElementType::kFloat32, {n}, {}})}, RunOptions{nullptr, true});
    ASSERT_TRUE(outs.ok()) << outs.status();
    double want = 0;
    for (float v : x) want += v;
    int64_t blocks = std::min<int64_t>(264, (n + 255) / 256);
    ASSERT_EQ((*outs)[1].shape, (Shape{blocks}));
    float total = Download<float>((*outs)[0].buffer.get(), 1)[0];
    EXPECT_NEAR(total, want, 1e-3 * std::sqrt(double(n)));
    for (float v : Download<float>((*outs)[1].buffer.get(), blocks)) EXPECT_EQ(v, total);
  }
}

TEST_F(GpuTest, ConcurrentRunsFromSeveralThreads) {
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadedFusion::Load(TestdataDir() + "/center");
  ASSERT_TRUE(f.ok()) << f.status();
  const int64_t rows = 257, cols = 129;
  std::vector<float> x = RandomVector(rows * cols, 11);
  Buf xd(x.size() * 4);
  xd.Upload(x);
  std::vector<std::thread> threads;
  std::vector<std::string> failures(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t]() {
      Cu().cuCtxSetCurrent(ctx_);
      for (int i = 0; i < 20; ++i) {
        absl::StatusOr<std::vector<OutputTensor>> outs =
            (*f)->Run({RunArg::Tensor({xd.get(), ElementType::kFloat32, {rows, cols}, {}}),
                       RunArg::Scalar(t + 1.0)},
                      RunOptions{nullptr, true});
        if (!outs.ok()) {
          failures[t] = std::string(outs.status().message());
          return;
        }
        std::vector<float> out = Download<float>((*outs)[0].buffer.get(), x.size());
        double sum0 = 0;
        for (int64_t c = 0; c < cols; ++c) sum0 += x[c];
        double want = (t + 1.0) * (x[0] - sum0 / cols);
        if (std::abs(out[0] - want) > 1e-4 * (1 + std::abs(want))) {
          failures[t] = "wrong result in thread " + std::to_string(t);
          return;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
}

TEST_F(GpuTest, BadArgumentsAreInvalidArgument) {
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadedFusion::Load(TestdataDir() + "/center");
  ASSERT_TRUE(f.ok()) << f.status();
  Buf xd(64);
  TensorArg x{xd.get(), ElementType::kFloat32, {4, 4}, {}};
  TensorArg wrong_type{xd.get(), ElementType::kBFloat16, {4, 4}, {}};
  EXPECT_EQ((*f)->Run({RunArg::Tensor(x)}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*f)->Run({RunArg::Tensor(wrong_type), RunArg::Scalar(1)}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*f)->Run({RunArg::Tensor(x), RunArg::Tensor(x)}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Buf out(64);
  absl::Status s = (*f)->RunInto({RunArg::Tensor(x), RunArg::Scalar(1)},
                                 {TensorArg{out.get(), ElementType::kFloat32, {4, 5}, {}},
                                  TensorArg{out.get(), ElementType::kFloat32, {1}, {}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << "cannot read " << path;
  return ss.str();
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  size_t n = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()), ++n)
    s.replace(at, from.size(), to);
  EXPECT_GT(n, 0u) << from;
  return s;
}

// The center fusion as manifest v2: both kernels ask for 16-byte aligned x
// and out, and rt_row_sum's rows must be at most 4096 wide.
absl::StatusOr<std::unique_ptr<LoadedFusion>> LoadAlignedCenter() {
  std::string m = ReadTestFile(TestdataDir() + "/center/manifest.json");
  m = ReplaceAll(m, "\"manifest_version\": 1", "\"manifest_version\": 2");
  m = ReplaceAll(m, "{\"kind\": \"input\", \"index\": 0}",
                 "{\"kind\": \"input\", \"index\": 0, \"align\": 16}");
  m = ReplaceAll(m, "{\"kind\": \"output\", \"index\": 0}",
                 "{\"kind\": \"output\", \"index\": 0, \"align\": 16}");
  m = ReplaceAll(m, "\"smem_bytes\": \"0\",",
                 "\"smem_bytes\": \"0\", \"requires\": [{\"expr\": \"s1\", \"at_most\": 4096}],");
  return LoadedFusion::LoadFromMemory(
      m,
      {{"rt_test_kernels.cubin", ReadTestFile(TestdataDir() + "/center/rt_test_kernels.cubin")}});
}

// An input 2 bytes past an allocation is copied to an aligned buffer before
// launch (the kernels would fault on the misaligned floats otherwise).
TEST_F(GpuTest, MisalignedInputIsCopiedToAnAlignedBuffer) {
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadAlignedCenter();
  ASSERT_TRUE(f.ok()) << f.status();
  const int64_t rows = 300, cols = 70;
  std::vector<float> x = RandomVector(rows * cols, 13);
  Buf base(x.size() * 4 + 16);
  const CUdeviceptr misaligned = base.get() + 2;
  ASSERT_EQ(Cu().cuMemcpyHtoD(misaligned, x.data(), x.size() * 4), CUDA_SUCCESS);
  TensorArg xa{misaligned, ElementType::kFloat32, {rows, cols}, {}};
  absl::StatusOr<std::vector<OutputTensor>> outs =
      (*f)->Run({RunArg::Tensor(xa), RunArg::Scalar(0.5)}, RunOptions{nullptr, true});
  ASSERT_TRUE(outs.ok()) << outs.status();
  CheckCenter(x, rows, cols, 0.5, Download<float>((*outs)[0].buffer.get(), x.size()),
              Download<float>((*outs)[1].buffer.get(), 1)[0]);
  // The same into caller outputs: aligned ones work, a misaligned one is
  // refused before anything runs.
  Buf out(x.size() * 4 + 16), count(4);
  absl::Status s = (*f)->RunInto({RunArg::Tensor(xa), RunArg::Scalar(-1.0)},
                                 {TensorArg{out.get(), ElementType::kFloat32, {rows, cols}, {}},
                                  TensorArg{count.get(), ElementType::kFloat32, {1}, {}}},
                                 RunOptions{nullptr, true});
  ASSERT_TRUE(s.ok()) << s;
  CheckCenter(x, rows, cols, -1.0, Download<float>(out.get(), x.size()),
              Download<float>(count.get(), 1)[0]);
  s = (*f)->RunInto({RunArg::Tensor(xa), RunArg::Scalar(1.0)},
                    {TensorArg{out.get() + 4, ElementType::kFloat32, {rows, cols}, {}},
                     TensorArg{count.get(), ElementType::kFloat32, {1}, {}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("output 0 at 0x"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("is not 16-byte aligned, which kernel rt_center needs"),
            std::string::npos)
      << s;
}

TEST_F(GpuTest, UnmetRequiresIsFailedPrecondition) {
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadAlignedCenter();
  ASSERT_TRUE(f.ok()) << f.status();
  Buf xd(4 * 5000 * 4);
  TensorArg x{xd.get(), ElementType::kFloat32, {4, 5000}, {}};
  absl::StatusOr<std::vector<OutputTensor>> outs =
      (*f)->Run({RunArg::Tensor(x), RunArg::Scalar(1.0)}, RunOptions{nullptr, true});
  ASSERT_FALSE(outs.ok());
  EXPECT_EQ(outs.status().code(), absl::StatusCode::kFailedPrecondition) << outs.status();
  EXPECT_NE(std::string(outs.status().message())
                .find("kernel rt_row_sum (test) was compiled for shapes where s1 <= 4096; these "
                      "inputs give s1 = 5000"),
            std::string::npos)
      << outs.status();
}

TEST(LoadedFusionTest, MissingDirectoryIsNotFound) {
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadedFusion::Load("/nonexistent/fusion");
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound) << f.status();
}

TEST(LoadedFusionTest, WithoutGpuLoadIsUnavailable) {
  if (CheckGpuAvailable().ok()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadedFusion::Load(TestdataDir() + "/center");
  EXPECT_EQ(f.status().code(), absl::StatusCode::kUnavailable) << f.status();
}

TEST_F(GpuTest, CorruptBinaryIsUnavailable) {
  std::map<std::string, std::string> bins = {{"rt_test_kernels.cubin", "not a cubin"}};
  std::ifstream in(TestdataDir() + "/center/manifest.json");
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<std::unique_ptr<LoadedFusion>> f = LoadedFusion::LoadFromMemory(ss.str(), bins);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(std::string(f.status().message()).find("rt_test_kernels.cubin"), std::string::npos)
      << f.status();
}

}  // namespace
}  // namespace runtime
}  // namespace fusiond
