// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// event_queue.h (internal to lib/runtime)
// -----------------------------------------------------------------------------
//
// The simulator's pending events, popped in (time, seq) order, where `seq` is
// the number the simulator gives each event as it posts it (strictly
// increasing).  It pops exactly what a binary heap of events ordered by
// (time, seq) pops, faster when many events share a time -- which is the
// simulator's common case: every running tick of the machine falls due at the
// same multiple of the tick period, so a 4096-CPU machine posts 4096 events
// per tick time.
//
// Structure: events of one time are a bucket, a FIFO list in posting order;
// since `seq` increases with every post, posting order is seq order.  Only
// buckets are heap-ordered, by (time, seq of the bucket's first event).  A
// push finds the open bucket of its time through a small direct-mapped table
// indexed by a hash of the time; when the table's entry holds another time
// (a collision) the push opens a new bucket for its time, and the older
// bucket of that time gets no more events: every event of the older bucket
// has a smaller seq than the new bucket's first, so (time, first seq) still
// orders the buckets as their events' (time, seq).
//
// Memory: events live in one pool of nodes (event + next link) and buckets in
// another, both recycled through free lists, so after the queue has reached
// its peak size neither Push nor Pop allocates.  The pool holds at most the
// peak number of pending events.
//
// Kernel counterpart: none (simulator machinery).
//
// Thread safety: none; the simulator's thread only.

#ifndef ISOLATION_RUNTIME_EVENT_QUEUE_H_
#define ISOLATION_RUNTIME_EVENT_QUEUE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "isolation/core/clock.h"
#include "isolation/core/contract.h"

namespace isolation::sim_internal {

// `Event` has the members `Nanos time` and `uint64_t seq`, and is copyable.
template <typename Event>
class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  size_t size() const { return size_; }

  // The time of the next event.  REQUIRES: !empty().
  Nanos front_time() const {
    ISOLATION_CONTRACT(!heap_.empty(), "EventQueue::front_time on an empty queue");
    return heap_.front().time;
  }

  // REQUIRES: e.seq is greater than the seq of every event pushed before.
  void Push(const Event& e) {
    ISOLATION_CONTRACT(size_ == 0 || e.seq > last_seq_, "EventQueue::Push: seq %d after %d", e.seq,
                       last_seq_);
    last_seq_ = e.seq;
    uint32_t& open = open_bucket_[Hash(e.time)];
    if (open == kNone || buckets_[open].time != e.time) open = OpenBucket(e.time, e.seq);
    Bucket& b = buckets_[open];
    const uint32_t n = AllocNode();
    nodes_[n].event = e;
    nodes_[n].next = kNone;
    if (b.tail == kNone) {
      b.head = n;
    } else {
      nodes_[b.tail].next = n;
    }
    b.tail = n;
    ++size_;
  }

  // Removes and returns the earliest event.  REQUIRES: !empty().
  Event Pop() {
    ISOLATION_CONTRACT(!heap_.empty(), "EventQueue::Pop on an empty queue");
    const uint32_t bi = heap_.front().bucket;
    Bucket& b = buckets_[bi];
    const uint32_t n = b.head;
    Node& node = nodes_[n];
    const Event e = node.event;
    b.head = node.next;
    node.next = free_node_;
    free_node_ = n;
    --size_;
    if (b.head == kNone) CloseFrontBucket(bi);
    return e;
  }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  static constexpr int kHashBits = 8;

  struct Node {
    Event event;
    uint32_t next;  // the bucket's next event, or the free list's next node
  };
  struct Bucket {
    Nanos time = 0;
    uint32_t head = kNone;  // first node (popped next)
    uint32_t tail = kNone;  // last node (pushed last)
  };
  struct HeapEntry {
    Nanos time;
    uint64_t first_seq;
    uint32_t bucket;
  };
  // std heaps are max-heaps: "later" compares greater, so the earliest is on top.
  struct Later {
    bool operator()(const HeapEntry& x, const HeapEntry& y) const {
      return x.time != y.time ? x.time > y.time : x.first_seq > y.first_seq;
    }
  };

  static size_t Hash(Nanos time) {
    return static_cast<size_t>((static_cast<uint64_t>(time) * 0x9e3779b97f4a7c15ULL) >>
                               (64 - kHashBits));
  }

  uint32_t AllocNode() {
    if (free_node_ != kNone) {
      const uint32_t n = free_node_;
      free_node_ = nodes_[n].next;
      return n;
    }
    nodes_.emplace_back();
    return static_cast<uint32_t>(nodes_.size() - 1);
  }

  uint32_t OpenBucket(Nanos time, uint64_t first_seq) {
    uint32_t bi;
    if (!free_buckets_.empty()) {
      bi = free_buckets_.back();
      free_buckets_.pop_back();
    } else {
      bi = static_cast<uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    buckets_[bi] = Bucket{time, kNone, kNone};
    heap_.push_back(HeapEntry{time, first_seq, bi});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    return bi;
  }

  // The front bucket is empty: it leaves the heap and the table.
  void CloseFrontBucket(uint32_t bi) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
    Bucket& b = buckets_[bi];
    uint32_t& open = open_bucket_[Hash(b.time)];
    if (open == bi) open = kNone;
    b.tail = kNone;
    free_buckets_.push_back(bi);
  }

  std::vector<Node> nodes_;
  uint32_t free_node_ = kNone;
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  std::vector<HeapEntry> heap_;
  // The bucket still open for pushes of each hashed time (kNone: none).
  std::array<uint32_t, size_t{1} << kHashBits> open_bucket_ = MakeNoBuckets();
  size_t size_ = 0;
  uint64_t last_seq_ = 0;

  static std::array<uint32_t, size_t{1} << kHashBits> MakeNoBuckets() {
    std::array<uint32_t, size_t{1} << kHashBits> a;
    a.fill(kNone);
    return a;
  }
};

}  // namespace isolation::sim_internal

#endif  // ISOLATION_RUNTIME_EVENT_QUEUE_H_
