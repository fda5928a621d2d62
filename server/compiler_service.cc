#include "server/compiler_service.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "server/rpc_log.h"
#include "server/status_map.h"

namespace fusiond {
namespace {

namespace pb = fusiond::v1;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Fills `response` from a result with what `contents` asks for; the record
// is moved, not copied.
void FillResponse(CachedCompileResult&& r, ReplyContents contents, Clock::time_point start,
                  pb::CompileResponse* response) {
  response->set_cache(r.hit ? pb::HIT : pb::MISS);
  *response->mutable_result() = std::move(r.compiled);
  TrimCompiledFusion(contents, response->mutable_result());
  response->set_cache_key(std::move(r.cache_key));
  response->set_server_micros(SecondsSince(start) * 1e6);
}

// include_source and include_report of a serialized CompileRequest, read
// without parsing the graph (the hit path's bytes parsed when first seen).
ReplyContents RawReplyContents(const std::string& raw) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(raw.data()),
                                            static_cast<int>(raw.size()));
  ReplyContents contents;
  while (uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const bool varint = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT;
    if (varint && (field == pb::CompileRequest::kIncludeSourceFieldNumber ||
                   field == pb::CompileRequest::kIncludeReportFieldNumber)) {
      uint64_t value = 0;
      if (!in.ReadVarint64(&value)) break;
      bool& flag = field == pb::CompileRequest::kIncludeSourceFieldNumber ? contents.source
                                                                          : contents.report;
      flag = value != 0;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      break;
    }
  }
  return contents;
}

ReplyContents RequestContents(const pb::CompileRequest& request) {
  return ReplyContents{request.include_source(), request.include_report()};
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A CompileResponse on the wire, built around the stored record without
// parsing or copying it: field 1 (cache = HIT), field 2 (result: the
// payload slice), field 3 (cache_key), field 4 (server_micros, a double).
grpc::ByteBuffer HitResponse(const CachedCompiler::PayloadHit& hit, Clock::time_point start) {
  std::string head;
  head.push_back(static_cast<char>((1 << 3) | 0));  // cache, varint
  PutVarint(&head, pb::HIT);
  head.push_back(static_cast<char>((2 << 3) | 2));  // result, length-delimited
  PutVarint(&head, hit.payload->size());
  std::string tail;
  tail.push_back(static_cast<char>((3 << 3) | 2));  // cache_key
  PutVarint(&tail, hit.cache_key.size());
  tail += hit.cache_key;
  tail.push_back(static_cast<char>((4 << 3) | 1));  // server_micros, fixed64
  double micros = SecondsSince(start) * 1e6;
  char bytes[8];
  std::memcpy(bytes, &micros, 8);  // little endian on every target we build for
  tail.append(bytes, 8);
  auto* owner = new std::shared_ptr<const std::string>(hit.payload);
  grpc::Slice slices[3] = {
      grpc::Slice(std::move(head)),
      grpc::Slice(
          const_cast<char*>((*owner)->data()), (*owner)->size(),
          [](void* p) { delete static_cast<std::shared_ptr<const std::string>*>(p); }, owner),
      grpc::Slice(std::move(tail))};
  return grpc::ByteBuffer(slices, 3);
}

// The status a call ends with when the client went away: DEADLINE_EXCEEDED
// past its deadline, else CANCELLED.
grpc::Status GoneStatus(grpc::CallbackServerContext* context) {
  if (context->deadline() <= std::chrono::system_clock::now()) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline exceeded");
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client");
}

const grpc::Status& DrainingStatus() {
  static const grpc::Status kDraining(grpc::StatusCode::UNAVAILABLE,
                                      "fusiond is shutting down; retry on another daemon");
  return kDraining;
}

std::string BufferBytes(const grpc::ByteBuffer* buffer) {
  std::string raw;
  if (grpc::Slice single; buffer->TrySingleSlice(&single).ok()) {
    raw.assign(reinterpret_cast<const char*>(single.begin()), single.size());
  } else if (std::vector<grpc::Slice> slices; buffer->Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices)
      raw.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return raw;
}

grpc::ByteBuffer ToBuffer(const google::protobuf::MessageLite& message) {
  grpc::Slice slice(message.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

// One Compile or Lookup call. Lives until both gRPC is done with it (OnDone)
// and the cached compiler's callback ran; whichever of End/OnCancel comes
// first wins.
class UnaryReactor : public grpc::ServerUnaryReactor {
 public:
  UnaryReactor(CompilerService* service, grpc::CallbackServerContext* context,
               grpc::ByteBuffer* response, ServiceMetrics* metrics, CachedCompiler* compiler,
               std::string raw_request, Clock::time_point start, bool lookup)
      : service_(service),
        context_(context),
        response_(response),
        metrics_(metrics),
        compiler_(compiler),
        raw_request_(std::move(raw_request)),
        start_(start),
        lookup_(lookup) {}

  void Start(const pb::CompileRequest& request) {
    contents_ = RequestContents(request);
    auto done = [this](absl::StatusOr<CachedCompileResult> r) {
      if (!r.ok()) {
        bool miss = lookup_ && absl::IsNotFound(r.status());
        End(ToGrpcStatus(r.status()), miss ? RpcResult::kMiss : RpcResult::kError, nullptr);
      } else {
        if (metrics_ && (r->hit || r->compiled_here)) metrics_->ObserveStages(r->stage_micros);
        End(grpc::Status::OK, r->hit ? RpcResult::kHit : RpcResult::kMiss, &*r);
      }
      Unref();
    };
    auto wanted = [this] { return !finished_.load(); };
    if (lookup_) {
      compiler_->LookupAsync(FromProtoRequest(request, service_->limits()), std::move(done),
                             std::move(wanted));
    } else {
      compiler_->CompileAsync(FromProtoRequest(request, service_->limits()), std::move(done),
                              std::move(wanted));
    }
  }

  void OnCancel() override { End(GoneStatus(context_), RpcResult::kError, nullptr); }
  void OnDone() override {
    service_->CallEnded(held_bytes_);
    Unref();
  }
  // Request bytes admitted for this call (CompilerService::AdmitBytes).
  void HoldBytes(size_t bytes) { held_bytes_ = bytes; }

 private:
  // Finishes the call once; the response is filled only by the winner, so
  // it is never touched after gRPC is done with it.
  void End(const grpc::Status& status, RpcResult result, CachedCompileResult* r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_.load()) return;
      if (r) {
        if (!lookup_) compiler_->RememberRawRequest(raw_request_, r->cache_key);
        pb::CompileResponse response;
        FillResponse(std::move(*r), contents_, start_, &response);
        *response_ = ToBuffer(response);
      }
      finished_ = true;
    }
    if (metrics_) {
      metrics_->ObserveRpc(lookup_ ? "Lookup" : "Compile", result, SecondsSince(start_),
                           GrpcCodeName(status.error_code()));
    }
    Finish(status);
  }
  void Unref() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

  CompilerService* service_;
  grpc::CallbackServerContext* context_;
  grpc::ByteBuffer* response_;
  ServiceMetrics* metrics_;
  CachedCompiler* compiler_;
  std::string raw_request_;
  Clock::time_point start_;
  const bool lookup_;
  ReplyContents contents_;
  size_t held_bytes_ = 0;
  std::mutex mu_;
  std::atomic<bool> finished_{false};
  std::atomic<int> refs_{2};  // OnDone + the compile callback
};

// One CompileStream call: at most `window` compiles at once, results
// written in the order they finish.
class StreamReactor : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  StreamReactor(CompilerService* service, grpc::CallbackServerContext* context,
                pb::CompileStreamRequest request, CachedCompiler* compiler, ServiceMetrics* metrics,
                int window)
      : service_(service),
        context_(context),
        request_(std::move(request)),
        compiler_(compiler),
        metrics_(metrics),
        window_(window < 1 ? 1 : window),
        total_(request_.requests_size()),
        start_(Clock::now()) {}

  void Start() {
    if (total_ == 0) {
      EndOnce(grpc::Status::OK);
      Unref();
      return;
    }
    Launch();
    Unref();  // the starter's reference
  }

  void OnWriteDone(bool ok) override {
    std::unique_lock<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok) {
      cancelled_ = true;
      lock.unlock();
      EndOnce(GoneStatus(context_));
      return;
    }
    pending_.pop_front();
    MaybeWriteOrFinishLocked(lock);
    if (lock.owns_lock()) lock.unlock();
    Launch();  // a reply left the buffer: room for another compile
  }
  void OnCancel() override {
    std::unique_lock<std::mutex> lock(mu_);
    cancelled_ = true;
    bool idle = !writing_;
    lock.unlock();
    if (idle) EndOnce(GoneStatus(context_));
  }
  void OnDone() override {
    service_->CallEnded(held_bytes_);
    Unref();
  }
  // Request bytes admitted for this call (CompilerService::AdmitBytes).
  void HoldBytes(size_t bytes) { held_bytes_ = bytes; }

 private:
  // Starts compiles up to the window, which counts replies not yet written
  // too: a client that stops reading holds at most `window` replies here,
  // not one per entry of its request. Re-entrant calls (a hit answered
  // inline) leave the work to the loop already running.
  void Launch() {
    for (;;) {
      int index;
      FusionRequest request;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (launching_) return;
        const int held = outstanding_ + static_cast<int>(pending_.size());
        if (cancelled_ || finished_ || held >= window_ || next_ >= total_) return;
        index = next_++;
        request = FromProtoRequest(request_.requests(index), service_->limits());
        ++outstanding_;
        launching_ = true;
        refs_.fetch_add(1);
      }
      compiler_->CompileAsync(
          std::move(request),
          [this, index](absl::StatusOr<CachedCompileResult> r) { OnResult(index, std::move(r)); },
          [this] {
            std::lock_guard<std::mutex> lock(mu_);
            return !cancelled_;
          });
      {
        std::lock_guard<std::mutex> lock(mu_);
        launching_ = false;
      }
    }
  }

  void OnResult(int index, absl::StatusOr<CachedCompileResult> r) {
    pb::CompileStreamResponse out;
    out.set_index(index);
    if (r.ok()) {
      if (metrics_ && (r->hit || r->compiled_here)) metrics_->ObserveStages(r->stage_micros);
      FillResponse(*std::move(r), RequestContents(request_.requests(index)), start_,
                   out.mutable_response());
    } else {
      grpc::Status st = ToGrpcStatus(r.status());
      out.set_code(st.error_code());
      out.set_message(st.error_message());
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      --outstanding_;
      ++completed_;
      pending_.push_back(ToBuffer(out));
      MaybeWriteOrFinishLocked(lock);
    }
    Launch();
    Unref();
  }

  void MaybeWriteOrFinishLocked(std::unique_lock<std::mutex>& lock) {
    if (writing_ || cancelled_) return;
    if (!pending_.empty()) {
      writing_ = true;
      StartWrite(&pending_.front());
      return;
    }
    if (completed_ == total_) {
      lock.unlock();
      EndOnce(grpc::Status::OK);
    }
  }

  void EndOnce(const grpc::Status& status) {
    if (finished_.exchange(true)) return;
    if (metrics_) {
      metrics_->ObserveRpc("CompileStream", status.ok() ? RpcResult::kOk : RpcResult::kError,
                           SecondsSince(start_), GrpcCodeName(status.error_code()));
    }
    Finish(status);
  }
  void Unref() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

  CompilerService* service_;
  grpc::CallbackServerContext* context_;
  const pb::CompileStreamRequest request_;
  CachedCompiler* compiler_;
  ServiceMetrics* metrics_;
  const int window_;
  const int total_;
  Clock::time_point start_;
  size_t held_bytes_ = 0;

  std::mutex mu_;
  std::deque<grpc::ByteBuffer> pending_;  // front is being written
  bool writing_ = false, cancelled_ = false, launching_ = false;
  int next_ = 0, outstanding_ = 0, completed_ = 0;
  std::atomic<bool> finished_{false};
  std::atomic<int> refs_{2};  // OnDone + Start; +1 per compile in flight
};

// A call answered at once (no reactor of ours).
grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* context, ServiceMetrics* metrics,
                                    const char* rpc, Clock::time_point start,
                                    const grpc::Status& status) {
  if (metrics) {
    metrics->ObserveRpc(rpc, status.ok() ? RpcResult::kOk : RpcResult::kError, SecondsSince(start),
                        GrpcCodeName(status.error_code()));
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

grpc::Status NotA(const char* what, size_t bytes) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      absl::StrCat("the request is not a fusiond.v1.", what, ": its ", bytes,
                                   " bytes do not parse as one (truncated, or another message)"));
}

// A refusal of a whole stream (not one entry of it).
class RefusedStream : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit RefusedStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

FusionRequest FromProtoRequest(const pb::CompileRequest& request, const CompileLimits& limits) {
  FusionRequest r;
  r.options.limits = limits;
  r.graph = request.graph();
  for (const auto& shape : request.signature().inputs()) {
    r.input_shapes.emplace_back(shape.sizes().begin(), shape.sizes().end());
  }
  if (!request.options().arch().empty()) r.options.arch = request.options().arch();
  // An arch is "sm_90"-sized; a huge one would only be quoted back.
  if (r.options.arch.size() > 64) r.options.arch = r.options.arch.substr(0, 64) + "...";
  r.options.allow_precision_increase = request.options().allow_precision_increase();
  r.options.general_kernels = request.options().general_kernels();
  return r;
}

CompilerService::CompilerService(CachedCompiler* compiler, ServiceMetrics* metrics, Options options)
    : compiler_(compiler), metrics_(metrics), options_(options) {}

void CompilerService::StartDraining() { draining_ = true; }

grpc::Status CompilerService::AdmitBytes(size_t bytes) {
  const size_t limit = options_.max_pending_bytes;
  size_t held = pending_bytes_.load();
  do {
    // A request alone is always admitted (gRPC bounds its size).
    if (limit > 0 && held > 0 && held + bytes > limit) {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          absl::StrCat("requests in progress hold ", held, " bytes; this one's ",
                                       bytes, " would pass the limit of ", limit,
                                       " (--max-pending-request-bytes); retry later"));
    }
  } while (!pending_bytes_.compare_exchange_weak(held, held + bytes));
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* CompilerService::Compile(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* request,
                                                   grpc::ByteBuffer* response) {
  Clock::time_point start = Clock::now();
  if (grpc::Status denied = Authorize(context); !denied.ok()) {
    return FinishNow(context, metrics_, "Compile", start, denied);
  }
  if (draining_) return FinishNow(context, metrics_, "Compile", start, DrainingStatus());
  std::string raw = BufferBytes(request);
  if (std::optional<CachedCompiler::PayloadHit> hit =
          compiler_->TryPayloadHit(raw, RawReplyContents(raw))) {
    *response = HitResponse(*hit, start);
    if (metrics_) {
      metrics_->ObserveStage("cache_io", hit->cache_io_micros);
      metrics_->ObserveRpc("Compile", RpcResult::kHit, SecondsSince(start));
    }
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  const size_t bytes = raw.size();
  if (grpc::Status full = AdmitBytes(bytes); !full.ok()) {
    return FinishNow(context, metrics_, "Compile", start, full);
  }
  pb::CompileRequest parsed;
  if (!parsed.ParseFromString(raw)) {
    pending_bytes_ -= bytes;
    return FinishNow(context, metrics_, "Compile", start, NotA("CompileRequest", bytes));
  }
  ++active_;
  auto* reactor = new UnaryReactor(this, context, response, metrics_, compiler_, std::move(raw),
                                   start, /*lookup=*/false);
  reactor->HoldBytes(bytes);
  reactor->Start(parsed);
  return reactor;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* CompilerService::CompileStream(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  if (grpc::Status denied = Authorize(context); !denied.ok()) return new RefusedStream(denied);
  if (draining_) return new RefusedStream(DrainingStatus());
  const size_t bytes = request->Length();
  if (grpc::Status full = AdmitBytes(bytes); !full.ok()) return new RefusedStream(full);
  pb::CompileStreamRequest parsed;
  if (!parsed.ParseFromString(BufferBytes(request))) {
    pending_bytes_ -= bytes;
    return new RefusedStream(NotA("CompileStreamRequest", bytes));
  }
  ++active_;
  auto* reactor = new StreamReactor(this, context, std::move(parsed), compiler_, metrics_,
                                    options_.stream_window);
  reactor->HoldBytes(bytes);
  reactor->Start();
  return reactor;
}

grpc::ServerUnaryReactor* CompilerService::Lookup(grpc::CallbackServerContext* context,
                                                  const grpc::ByteBuffer* request,
                                                  grpc::ByteBuffer* response) {
  Clock::time_point start = Clock::now();
  if (grpc::Status denied = Authorize(context); !denied.ok()) {
    return FinishNow(context, metrics_, "Lookup", start, denied);
  }
  if (draining_) return FinishNow(context, metrics_, "Lookup", start, DrainingStatus());
  const size_t bytes = request->Length();
  if (grpc::Status full = AdmitBytes(bytes); !full.ok()) {
    return FinishNow(context, metrics_, "Lookup", start, full);
  }
  pb::CompileRequest parsed;
  if (!parsed.ParseFromString(BufferBytes(request))) {
    pending_bytes_ -= bytes;
    return FinishNow(context, metrics_, "Lookup", start, NotA("CompileRequest", bytes));
  }
  ++active_;
  auto* reactor = new UnaryReactor(this, context, response, metrics_, compiler_, std::string(),
                                   start, /*lookup=*/true);
  reactor->HoldBytes(bytes);
  reactor->Start(parsed);
  return reactor;
}

grpc::ServerUnaryReactor* CompilerService::Stats(grpc::CallbackServerContext* context,
                                                 const grpc::ByteBuffer* request,
                                                 grpc::ByteBuffer* response) {
  Clock::time_point start = Clock::now();
  if (grpc::Status denied = Authorize(context); !denied.ok()) {
    return FinishNow(context, metrics_, "Stats", start, denied);
  }
  if (pb::StatsRequest parsed; !parsed.ParseFromString(BufferBytes(request))) {
    return FinishNow(context, metrics_, "Stats", start, NotA("StatsRequest", request->Length()));
  }
  CachedCompilerStats c = compiler_->Stats();
  KernelCacheStats k = compiler_->cache()->Stats();
  pb::StatsResponse out;
  out.set_hits(c.hits);
  out.set_misses(c.misses);
  out.set_compiles(c.compiles);
  out.set_corrupt_records(k.corrupt_records);
  out.set_evictions(k.evictions);
  out.set_entries(k.entries);
  out.set_bytes(k.bytes);
  out.set_in_flight(c.in_flight);
  out.set_queue_depth(c.queue_depth);
  out.set_single_flight_joins(c.joins);
  out.set_rejected(c.rejected);
  out.set_nvrtc_reuses(c.nvrtc_reuses);
  out.set_cache_read_only(k.read_only);
  out.set_cache_error(k.read_only_error);
  out.set_cache_write_errors(k.write_errors);
  out.set_cache_recoveries(k.recoveries);
  *response = ToBuffer(out);
  return FinishNow(context, metrics_, "Stats", start, grpc::Status::OK);
}

}  // namespace fusiond
