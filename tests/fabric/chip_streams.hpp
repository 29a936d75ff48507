// The chip fabric tests' traffic: every rank streams messages of varying length to every other rank
// through the routers (multi-hop on lines, rings and meshes; non-blocking sends and receives
// interleaved) and checks each message's length, words and order. Shared by chip_fabric_test.cpp
// and chip_wrap_test.cpp.
#pragma once

#include <emulation/fabric/fabric.hpp>

#include <cstdint>
#include <string>

namespace kccl::test::chip {

namespace cf = ::kccl::emu::fabric;
namespace fc = ::kccl::fabric;

/// Device asserts (KCCL_ASSERT) become exceptions the run reports, not aborts.
inline void throw_handler(const char*, const char* msg, const char*, int) { throw ::kccl::emu::EmulationError(msg); }

/// Word i of message `msg` from src to dst: differs by every field, so a misplaced, reordered or
/// stale word is caught.
inline uint32_t stream_word(uint32_t src, uint32_t dst, uint32_t msg, uint32_t i) {
    return (src * 40503u) ^ (dst << 21) ^ (msg << 11) ^ (i * 2654435761u);
}

/// Adds the streams kernel (`msgs` messages from every rank to every other rank) to `bed`, runs it
/// with `ro` and returns "" or what failed (the run report, or each rank's count of bad words and
/// lengths).
template <class RConfig = fc::RouterConfig>
std::string run_streams(cf::Bed& bed, uint32_t msgs, const ::kccl::emu::RunOptions& ro) {
    ::kccl::set_assert_handler(&throw_handler);
    const uint32_t maxb = bed.opt.message_bytes;
    bed.add<fc::FabricLinkConfig, RConfig>([msgs, maxb](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
        const uint32_t me = link.rank(), dirs = link.directions();
        auto len = [&](uint32_t s, uint32_t d, uint32_t m) { return (((s + 3 * d + 7 * m) * 36u) % (maxb + 1)) & ~3u; };
        uint32_t sent[64] = {}, got[64] = {};
        uint64_t bad = 0;
        for (bool busy = true; busy;) {
            busy = false;
            bool moved = false;
            for (uint32_t d = 0; d < dirs; ++d) {
                const uint32_t q = link.peer(d);
                if (sent[d] < msgs) {
                    busy = true;
                    const uint32_t n = len(me, q, sent[d]);
                    uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(b.input_l1, maxb + 4));
                    for (uint32_t i = 0; i < n / 4; ++i) w[i] = stream_word(me, q, sent[d], i);
                    if (link.try_send(d, b.input_l1, n)) {
                        ++sent[d];
                        moved = true;
                    }
                }
                if (got[d] < msgs) {
                    busy = true;
                    kccl::coll::View v;
                    if (link.try_recv(d, v)) {
                        const uint32_t n = len(q, me, got[d]);
                        bad += v.bytes != n;
                        const uint32_t* w = reinterpret_cast<const uint32_t*>(hal.l1_ptr(v.l1, v.bytes + 4));
                        for (uint32_t i = 0; i < v.bytes / 4 && i < n / 4; ++i) bad += w[i] != stream_word(q, me, got[d], i);
                        link.release(v);
                        ++got[d];
                        moved = true;
                    }
                }
            }
            if (busy && !moved) hal.idle();
        }
        link.quiesce();
        return bad;
    });
    const ::kccl::emu::RunReport rep = bed.run(ro);
    if (!rep.ok()) return rep.summary();
    for (uint32_t r = 0; r < bed.ranks(); ++r)
        if (rep.at(bed.worker(r)).value != 0)
            return "rank " + std::to_string(r) + ": " + std::to_string(rep.at(bed.worker(r)).value) + " bad words or lengths";
    return "";
}

}  // namespace kccl::test::chip
