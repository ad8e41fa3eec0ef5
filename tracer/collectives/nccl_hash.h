// NCCL's communicator hash (its src/include/bitops.h eatHash/digestHash),
// mirrored so the NCCL interposer computes the same rank-invariant id the
// profiler plugin is given: the hash of the ncclUniqueId for a communicator
// made from one, of (parent hash, split count, color) for a split.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace apptracer::nccl {

class Hash {
 public:
  // One eatHash call: the size, then the bytes in 8-byte little-endian chunks.
  Hash& eat(const void* bytes, size_t size) {
    const char* at = static_cast<const char*>(bytes);
    acc_[0] ^= size;
    while (size != 0) {
      acc_[0] += acc_[1];
      acc_[1] ^= acc_[0];
      acc_[0] ^= acc_[0] >> 31;
      acc_[0] *= 0x9de62bbc8cef3ce3ull;
      acc_[1] ^= acc_[1] >> 32;
      acc_[1] *= 0x485cd6311b599e79ull;
      size_t chunk = size < sizeof(uint64_t) ? size : sizeof(uint64_t);
      uint64_t x = 0;
      std::memcpy(&x, at, chunk);
      at += chunk;
      size -= chunk;
      acc_[0] += x;
    }
    return *this;
  }
  template <typename T>
  Hash& eat(const T& value) {
    return eat(&value, sizeof value);
  }
  uint64_t digest() const {
    uint64_t h = acc_[0];
    h ^= h >> 31;
    h *= 0xbac3bd562846de6bull;
    h += acc_[1];
    h ^= h >> 32;
    h *= 0x995a187a14e7b445ull;
    return h;
  }

 private:
  uint64_t acc_[2] = {1, 1};
};

constexpr size_t kUniqueIdBytes = 128;

inline uint64_t unique_id_hash(const void* unique_id) {
  return Hash().eat(unique_id, kUniqueIdBytes).digest();
}

inline uint64_t split_hash(uint64_t parent_hash, int split_count, int color) {
  return Hash().eat(parent_hash).eat(split_count).eat(color).digest();
}

}  // namespace apptracer::nccl
