// The decoder seam's hardware backend: BlueField's compression engine through DOCA Compress
// (DOCA 2.7 or later: decompress-deflate and decompress-LZ4-block tasks). Built only where pkg-config
// finds doca-compress (codecs/CMakeLists.txt); docs/DOCA.md says how to build, run and compare it.
// Not compiled on the development host, which has no DOCA SDK.
//
// The engine reads and writes only memory registered with it (a doca_mmap), and frames arrive
// anywhere in the caller's memory, so this backend copies each stream into a registered staging
// buffer and the plane out of another: simple and always correct, at the cost of two copies per
// plane. A zero-copy version would register the pipeline's slot and destination buffers once.
// One task is in flight at a time, polled to completion on the calling thread.
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_compress.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/decoder_backends.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

void check(doca_error_t rc, const char* what) {
  if (rc != DOCA_SUCCESS) fail("doca: {}: {}", what, doca_error_get_descr(rc));
}

// Owners of each DOCA object; the deleters log nothing and cannot fail the caller.
struct CloseDev { void operator()(doca_dev* d) const noexcept { doca_dev_close(d); } };
struct DestroyCompress { void operator()(doca_compress* c) const noexcept { doca_compress_destroy(c); } };
struct DestroyPe { void operator()(doca_pe* p) const noexcept { doca_pe_destroy(p); } };
struct DestroyMmap {
  void operator()(doca_mmap* m) const noexcept {
    doca_mmap_stop(m);
    doca_mmap_destroy(m);
  }
};
struct DestroyInventory {
  void operator()(doca_buf_inventory* i) const noexcept {
    doca_buf_inventory_stop(i);
    doca_buf_inventory_destroy(i);
  }
};
struct ReleaseBuf { void operator()(doca_buf* b) const noexcept { doca_buf_dec_refcount(b, nullptr); } };
struct FreeTask { void operator()(doca_task* t) const noexcept { doca_task_free(t); } };
using BufPtr = std::unique_ptr<doca_buf, ReleaseBuf>;

bool supported(doca_devinfo* info, StreamFormat format) {
  return (format == StreamFormat::deflate ? doca_compress_cap_task_decompress_deflate_is_supported(info)
                                          : doca_compress_cap_task_decompress_lz4_block_is_supported(info)) ==
         DOCA_SUCCESS;
}

// A task's outcome, written by the completion and error callbacks through its user data.
struct Outcome {
  bool done = false;
  doca_error_t status = DOCA_SUCCESS;
};
doca_task* as_task(doca_compress_task_decompress_deflate* t) { return doca_compress_task_decompress_deflate_as_task(t); }
doca_task* as_task(doca_compress_task_decompress_lz4_block* t) {
  return doca_compress_task_decompress_lz4_block_as_task(t);
}
template <typename Task>
void on_done(Task* task, doca_data user, doca_data) {
  auto* outcome = static_cast<Outcome*>(user.ptr);
  outcome->status = doca_task_get_status(as_task(task));
  outcome->done = true;
}

// Registered memory the engine may touch: one region, re-registered when a larger one is needed.
struct Staging {
  std::vector<std::byte> bytes;
  std::unique_ptr<doca_mmap, DestroyMmap> mmap;
};

class DocaDecoder final : public StreamDecoder {
 public:
  explicit DocaDecoder(StreamFormat format);
  ~DocaDecoder() override {
    if (compress_) doca_ctx_stop(doca_compress_as_ctx(compress_.get()));
  }
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override;

 private:
  void ensure(Staging& staging, std::size_t size);

  StreamFormat format_;
  std::uint64_t max_bytes_ = 0;
  // Member order is teardown order in reverse: buffers and mmaps go before the device.
  std::unique_ptr<doca_dev, CloseDev> dev_;
  std::unique_ptr<doca_pe, DestroyPe> pe_;
  std::unique_ptr<doca_compress, DestroyCompress> compress_;
  std::unique_ptr<doca_buf_inventory, DestroyInventory> inventory_;
  Staging in_, out_;
};

DocaDecoder::DocaDecoder(StreamFormat format) : format_(format) {
  doca_devinfo** list = nullptr;
  std::uint32_t count = 0;
  check(doca_devinfo_create_list(&list, &count), "doca_devinfo_create_list");
  for (std::uint32_t i = 0; i < count && !dev_; ++i) {
    if (!supported(list[i], format)) continue;
    doca_dev* dev = nullptr;
    if (doca_dev_open(list[i], &dev) != DOCA_SUCCESS) continue;
    dev_.reset(dev);
    check(format == StreamFormat::deflate
              ? doca_compress_cap_task_decompress_deflate_get_max_buf_size(list[i], &max_bytes_)
              : doca_compress_cap_task_decompress_lz4_block_get_max_buf_size(list[i], &max_bytes_),
          "get_max_buf_size");
  }
  doca_devinfo_destroy_list(list);
  if (!dev_) fail("doca: no device can decompress {} ({} devices found)", stream_format_name(format), count);

  doca_pe* pe = nullptr;
  check(doca_pe_create(&pe), "doca_pe_create");
  pe_.reset(pe);
  doca_compress* compress = nullptr;
  check(doca_compress_create(dev_.get(), &compress), "doca_compress_create");
  compress_.reset(compress);
  doca_ctx* ctx = doca_compress_as_ctx(compress);
  check(doca_pe_connect_ctx(pe, ctx), "doca_pe_connect_ctx");
  if (format == StreamFormat::deflate)
    check(doca_compress_task_decompress_deflate_set_conf(compress, on_done, on_done, 1), "set_conf (deflate)");
  else
    check(doca_compress_task_decompress_lz4_block_set_conf(compress, on_done, on_done, 1), "set_conf (lz4 block)");
  check(doca_ctx_start(ctx), "doca_ctx_start");
  doca_buf_inventory* inventory = nullptr;
  check(doca_buf_inventory_create(2, &inventory), "doca_buf_inventory_create");
  inventory_.reset(inventory);
  check(doca_buf_inventory_start(inventory), "doca_buf_inventory_start");
}

void DocaDecoder::ensure(Staging& staging, std::size_t size) {
  if (staging.mmap && staging.bytes.size() >= size) return;
  staging.mmap.reset();
  staging.bytes.assign(std::max<std::size_t>(size, 1 << 20), std::byte{0});
  doca_mmap* mmap = nullptr;
  check(doca_mmap_create(&mmap), "doca_mmap_create");
  staging.mmap.reset(mmap);
  check(doca_mmap_set_memrange(mmap, staging.bytes.data(), staging.bytes.size()), "doca_mmap_set_memrange");
  check(doca_mmap_add_dev(mmap, dev_.get()), "doca_mmap_add_dev");
  check(doca_mmap_start(mmap), "doca_mmap_start");
}

void DocaDecoder::decode(std::span<const std::byte> src, std::span<std::byte> dst) {
  if (src.size() > max_bytes_ || dst.size() > max_bytes_)
    fail("corrupt frame: doca: a {}-byte stream or {}-byte plane is over the engine's {} bytes", src.size(),
         dst.size(), max_bytes_);
  ensure(in_, src.size());
  ensure(out_, dst.size());
  std::memcpy(in_.bytes.data(), src.data(), src.size());

  doca_buf *in = nullptr, *out = nullptr;
  check(doca_buf_inventory_buf_get_by_data(inventory_.get(), in_.mmap.get(), in_.bytes.data(), src.size(), &in),
        "doca_buf_inventory_buf_get_by_data");
  BufPtr in_owner(in);
  check(doca_buf_inventory_buf_get_by_addr(inventory_.get(), out_.mmap.get(), out_.bytes.data(), dst.size(), &out),
        "doca_buf_inventory_buf_get_by_addr");
  BufPtr out_owner(out);

  Outcome outcome;
  doca_data user{};
  user.ptr = &outcome;
  doca_task* task = nullptr;
  if (format_ == StreamFormat::deflate) {
    doca_compress_task_decompress_deflate* t = nullptr;
    check(doca_compress_task_decompress_deflate_alloc_init(compress_.get(), in, out, user, &t), "alloc deflate task");
    task = as_task(t);
  } else {
    doca_compress_task_decompress_lz4_block* t = nullptr;
    check(doca_compress_task_decompress_lz4_block_alloc_init(compress_.get(), in, out, user, &t), "alloc lz4 task");
    task = as_task(t);
  }
  std::unique_ptr<doca_task, FreeTask> task_owner(task);
  check(doca_task_submit(task), "doca_task_submit");
  while (!outcome.done) doca_pe_progress(pe_.get());
  if (outcome.status != DOCA_SUCCESS)
    fail("corrupt frame: doca: {} plane: {}", stream_format_name(format_), doca_error_get_descr(outcome.status));
  std::size_t produced = 0;
  check(doca_buf_get_data_len(out, &produced), "doca_buf_get_data_len");
  if (produced != dst.size())
    fail("corrupt frame: doca: {} plane decodes to {} bytes, expected {}", stream_format_name(format_), produced,
         dst.size());
  std::memcpy(dst.data(), out_.bytes.data(), dst.size());
}

}  // namespace

std::unique_ptr<StreamDecoder> make_doca_decoder(StreamFormat format) { return std::make_unique<DocaDecoder>(format); }
std::string doca_version_string() { return WIREZIP_DOCA_VERSION; }

}  // namespace wirezip::codecs
