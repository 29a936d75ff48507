// kccl/collectives/link.hpp — the link concept: one vocabulary over EDM and IPCQ for collectives.
//
// WHAT IT IS
//   A link is what one core of a collective group uses to exchange messages with its neighbours.
//   It addresses DIRECTIONS (small integers, 0 .. directions()-1); the host plan
//   (collectives/host/plan.hpp) maps a peer rank to a direction. Two models:
//     kccl::coll::IpcqLink<H, Dirs>   (link_ipcq.hpp) directions = the IPCQ direction set (N/S/E/W...)
//     kccl::coll::EdmLink<H, Config>  (link_edm.hpp)  directions = the Ethernet links of the worker's
//                                     chip, one EDM sender + one EDM receiver channel on each
//   Collective primitives (primitives.hpp) and schedules are written once over this concept.
//
// OPERATIONS (member functions of a link type L; `d` is a direction)
//   using hal_type = H;                       the device backend the link runs on
//   H& hal()                                  the backend handle (for l1_ptr in reducers)
//   uint32_t directions() const               number of directions (some may be absent)
//   bool can_send(d) const, can_recv(d) const d is installed for sending / receiving
//   uint32_t max_message_bytes() const        largest message on EVERY direction of this link
//                                             (the plan gives all directions one size); a chunk
//                                             larger than this is streamed in pieces by the primitives
//   uint32_t slots(d) const                   messages direction d holds on their way to the peer
//                                             before a send blocks (0 if d cannot send); the
//                                             executor checks it against slots_needed
//                                             (schedule.hpp) at the first send on d
//   void send(d, src_l1, n)                   message of n bytes (0 <= n <= max) from local L1; blocks
//                                             until it is handed over; src may be reused on return
//   bool try_send(d, src_l1, n)               the same, or false (nothing done) if it would block
//   View recv(d)                              blocks for the next message from d; returns a view of it
//                                             in LOCAL L1 (IPCQ: the rx slot itself, zero copy; EDM:
//                                             the worker's landing buffer for d). Valid until release.
//   bool try_recv(d, View& out)               the same, or false if nothing has arrived (also once
//                                             the peer has quiesced: nothing more will come)
//   void release(const View&)                 frees the view's slot (messages of one direction are
//                                             released in receive order; at most max_held_views()
//                                             views of one direction may be held at once)
//   uint32_t recv_into(d, dst_l1, capacity)   receives the next message into local L1 and releases
//                                             it; returns its length (an error if > capacity)
//   void quiesce()                            teardown: every message this core sent has been taken
//                                             by its receiver and every link resource is idle; call
//                                             once at the end of the kernel, after the last send and
//                                             recv. No send or recv is allowed after it.
//   static constexpr uint32_t max_held_views  views of one direction that may be held at once (>= 1)
//
// MESSAGES
//   Per direction, messages arrive in the order they were sent, each with its exact length
//   (0-byte messages included). Lengths need no alignment. A message larger than
//   max_message_bytes() is an error (device error path naming the link, direction and sizes).
//
// PUTS (optional capability; link_puts<L>; IPCQ has it, EDM does not)
//   void open_window(base)                    one epoch on every direction: this core's window at
//                                             L1 `base` opens to its senders, and its own puts
//                                             move to the next epoch (both ends of a link call it
//                                             equally often: the executor, once per collective)
//   uint32_t peer_window(d)                   blocks until d's receiver opened this epoch's window;
//                                             returns its base (try_peer_window(d, base): or false)
//   void put(d, src_l1, n, peer_l1)           writes n bytes into the receiver's L1 at peer_l1 and
//                                             sends a notice on d, in FIFO order with the sends;
//                                             the receiver's recv gives a View with landed = true
//                                             at peer_l1, its recv_into(d, peer_l1, ..) copies
//                                             nothing (try_put: or false if it would block)
//   A put crosses the NoC once: no slot, no copy out of it (the "receive into the destination"
//   of tt-metal's CCL ops). kccl's executor puts only where both ends' schedules say where the
//   chunk lands (Step::put), and a notice that landed elsewhere is a device error.
//
// C++17, freestanding, no heap, no exceptions.
#pragma once

#include <hal/config.hpp>
#include <hal/contract.hpp>

#include <stdint.h>
#include <type_traits>
#include <utility>

namespace kccl::coll {

/// A received message, held until `release`: its payload is `bytes` bytes at local L1 `l1`.
struct View {
    uint32_t l1 = 0;     ///< local L1 address of the payload
    uint32_t bytes = 0;  ///< message length in bytes
    uint32_t dir = 0;    ///< direction it came from
    uint32_t seq = 0;    ///< the model's sequence number of the message on `dir` (for release)
    bool landed = false; ///< a put (PUTS below): the payload is where the sender wrote it, not in a slot
};

/// "No direction": a peer that is not a neighbour, an absent link.
inline constexpr uint32_t no_dir = 0xffffffffu;

namespace detail {

template <class...>
using void_t = void;

#define KCCL_LINK_DETECT(name, ret, args)                                                           \
    template <class L, class = void>                                                                \
    struct has_##name : std::false_type {};                                                         \
    template <class L>                                                                              \
    struct has_##name<L, void_t<decltype(std::declval<L&>().name args)>>                            \
        : std::is_convertible<decltype(std::declval<L&>().name args), ret> {};

KCCL_LINK_DETECT(directions, uint32_t, ())
KCCL_LINK_DETECT(can_send, bool, (uint32_t{}))
KCCL_LINK_DETECT(can_recv, bool, (uint32_t{}))
KCCL_LINK_DETECT(max_message_bytes, uint32_t, ())
KCCL_LINK_DETECT(slots, uint32_t, (uint32_t{}))
KCCL_LINK_DETECT(send, void, (uint32_t{}, uint32_t{}, uint32_t{}))
KCCL_LINK_DETECT(try_send, bool, (uint32_t{}, uint32_t{}, uint32_t{}))
KCCL_LINK_DETECT(recv, View, (uint32_t{}))
KCCL_LINK_DETECT(try_recv, bool, (uint32_t{}, std::declval<View&>()))
KCCL_LINK_DETECT(release, void, (std::declval<const View&>()))
KCCL_LINK_DETECT(recv_into, uint32_t, (uint32_t{}, uint32_t{}, uint32_t{}))
KCCL_LINK_DETECT(quiesce, void, ())

#undef KCCL_LINK_DETECT

template <class L, class = void>
struct has_hal_type : std::false_type {};
template <class L>
struct has_hal_type<L, void_t<typename L::hal_type>> : std::true_type {};

template <class L, class = void>
struct has_hal : std::false_type {};
template <class L>
struct has_hal<L, void_t<typename L::hal_type, decltype(std::declval<L&>().hal())>>
    : std::is_same<decltype(std::declval<L&>().hal()), typename L::hal_type&> {};

template <class L, class = void>
struct has_max_held : std::false_type {};
template <class L>
struct has_max_held<L, void_t<decltype(L::max_held_views)>>
    : std::bool_constant<(uint32_t(L::max_held_views) >= 1)> {};

/// The heap-free error-message builder (kccl/hal/config.hpp).
using Msg = ::kccl::detail::Msg;
[[noreturn]] inline void die(const Msg& m) { ::kccl::detail::assert_fail("collectives", m.buf, __FILE__, __LINE__); }

template <class L, class = void>
struct has_puts : std::false_type {};
template <class L>
struct has_puts<L, void_t<decltype(std::declval<L&>().open_window(uint32_t{})),
                          decltype(std::declval<L&>().peer_window(uint32_t{})),
                          decltype(std::declval<L&>().try_peer_window(uint32_t{}, std::declval<uint32_t&>())),
                          decltype(std::declval<L&>().put(uint32_t{}, uint32_t{}, uint32_t{}, uint32_t{})),
                          decltype(std::declval<L&>().try_put(uint32_t{}, uint32_t{}, uint32_t{}, uint32_t{}))>>
    : std::true_type {};

}  // namespace detail


/// True when L models the link concept.
template <class L>
inline constexpr bool is_link_v =
    detail::has_hal_type<L>::value && detail::has_hal<L>::value && detail::has_directions<L>::value &&
    detail::has_can_send<L>::value && detail::has_can_recv<L>::value && detail::has_max_message_bytes<L>::value &&
    detail::has_slots<L>::value && detail::has_send<L>::value && detail::has_try_send<L>::value && detail::has_recv<L>::value &&
    detail::has_try_recv<L>::value && detail::has_release<L>::value && detail::has_recv_into<L>::value &&
    detail::has_quiesce<L>::value && detail::has_max_held<L>::value;

/// `static_assert(kccl::coll::check_link<L>())` names every missing or mistyped operation.
template <class L>
constexpr bool check_link() {
    static_assert(detail::has_hal_type<L>::value,
                  "A kccl link must name its device backend as the member type `hal_type`.");
    static_assert(detail::has_hal<L>::value,
                  "A kccl link must give its backend handle with `hal_type& hal()`, so that primitives can reach local L1.");
    static_assert(detail::has_directions<L>::value,
                  "A kccl link must say how many directions it has with `uint32_t directions() const`.");
    static_assert(detail::has_can_send<L>::value,
                  "A kccl link must say whether a direction can send with `bool can_send(uint32_t dir) const`.");
    static_assert(detail::has_can_recv<L>::value,
                  "A kccl link must say whether a direction can receive with `bool can_recv(uint32_t dir) const`.");
    static_assert(detail::has_max_message_bytes<L>::value,
                  "A kccl link must give its largest message with `uint32_t max_message_bytes() const`.");
    static_assert(detail::has_slots<L>::value,
                  "A kccl link must say how many messages a direction holds before a send blocks with "
                  "`uint32_t slots(uint32_t dir) const`, so that an executor can check a wavefront window against it.");
    static_assert(detail::has_send<L>::value,
                  "A kccl link must send with `void send(uint32_t dir, uint32_t src_l1, uint32_t bytes)`.");
    static_assert(detail::has_try_send<L>::value,
                  "A kccl link must have the non-blocking `bool try_send(uint32_t dir, uint32_t src_l1, uint32_t bytes)`.");
    static_assert(detail::has_recv<L>::value,
                  "A kccl link must receive a view of the next message with `kccl::coll::View recv(uint32_t dir)`.");
    static_assert(detail::has_try_recv<L>::value,
                  "A kccl link must have the non-blocking `bool try_recv(uint32_t dir, kccl::coll::View& out)`.");
    static_assert(detail::has_release<L>::value,
                  "A kccl link must free a received view with `void release(const kccl::coll::View&)`.");
    static_assert(detail::has_recv_into<L>::value,
                  "A kccl link must receive into L1 with `uint32_t recv_into(uint32_t dir, uint32_t dst_l1, uint32_t capacity)`.");
    static_assert(detail::has_quiesce<L>::value,
                  "A kccl link must end its use of the transport with `void quiesce()`.");
    static_assert(detail::has_max_held<L>::value,
                  "A kccl link must say how many views of one direction may be held at once with "
                  "`static constexpr uint32_t max_held_views` (at least 1).");
    return is_link_v<L>;
}

// ---- the group arguments -------------------------------------------------------------------
// Every core of a collective group gets one argument block from coll::host::GroupPlan::worker_args
// (the same writer for both transports, for the emulation and for hardware):
//   [0] group_magic   [1] transport (0 IPCQ, 1 EDM)   [2] rank   [3] ranks   [4] shape (0 ring, 1 line, 2 mesh, 3 all_pairs)
//   [5] next_dir (towards rank+1 in ring order; no_dir at the end of a line)   [6] prev_dir
//   [7] directions    [8 .. 8+max_group_dirs) peer rank of each direction (no_dir: none)
//   [16] input_l1  [17] output_l1  [18] scratch_l1  [19] buffer_bytes (each of the three)
//   [20] max_message_bytes   [21] link_args (offset from the block of the link's own arguments)
//   [22] pipeline_messages (messages one direction holds before the sender blocks)
//   [23] mesh_cols (mesh: columns, rank = row * cols + col; 0 otherwise)
// Directions are kccl::Dir numbers (N 0, S 1, E 2, W 3) on both transports; next = E, prev = W; in an
// all_pairs group direction d of rank r reaches rank (d < r ? d : d + 1) (all_pairs_dir).
namespace group_args {
inline constexpr uint32_t magic = 0, transport = 1, rank = 2, ranks = 3, shape = 4, next_dir = 5, prev_dir = 6,
                          directions = 7, peer_of_dir = 8, input_l1 = 16, output_l1 = 17, scratch_l1 = 18,
                          buffer_bytes = 19, max_message_bytes = 20, link_args = 21, pipeline_messages = 22,
                          mesh_cols = 23, count = 24;
}
inline constexpr uint32_t group_magic = 0x4C4F434Bu;  // "KCOL"
inline constexpr uint32_t max_group_dirs = 8;

/// The machine a collective runs on: IPCQ (PEs of one chip), EDM (chips over Ethernet), the
/// routed chip fabric (include/fabric/) or the wafer's PE fabric (include/wafer/). Group
/// arguments name ipcq / edm; run_collective (emulation/collective.hpp) takes all four.
enum class Transport : uint32_t { ipcq = 0, edm = 1, fabric = 2, wafer = 3 };
/// ring / line / mesh: directions are kccl::Dir (N 0, S 1, E 2, W 3; next = E, prev = W).
/// all_pairs: every rank has a direction to every other rank (p - 1 directions, p <= max_group_dirs
/// + 1): rank r reaches peer q on direction (q < r ? q : q - 1); next / prev are the directions to
/// r+1 / r-1 (mod p), so ring methods run on it too.
enum class GroupShape : uint32_t { ring = 0, line = 1, mesh = 2, all_pairs = 3 };

/// The direction of rank `rank` that reaches `peer` in an all_pairs group (peer != rank).
constexpr uint32_t all_pairs_dir(uint32_t rank, uint32_t peer) { return peer < rank ? peer : peer - 1; }

/// A core's view of its group, read from its arguments.
struct GroupArgs {
    Transport transport = Transport::ipcq;
    GroupShape shape = GroupShape::ring;
    uint32_t rank = 0, ranks = 1;
    uint32_t next_dir = no_dir, prev_dir = no_dir;
    uint32_t directions = 0;
    uint32_t peer_of_dir[max_group_dirs] = {};
    uint32_t input_l1 = 0, output_l1 = 0, scratch_l1 = 0, buffer_bytes = 0;
    uint32_t max_message_bytes = 0;
    uint32_t pipeline_messages = 0;
    uint32_t mesh_cols = 0;
    uint32_t link_args = 0;  ///< absolute argument index of the link's block

    /// The direction that reaches `peer` in one hop, or no_dir.
    uint32_t dir_to(uint32_t peer) const {
        for (uint32_t d = 0; d < directions && d < max_group_dirs; ++d)
            if (peer_of_dir[d] == peer) return d;
        return no_dir;
    }
};

/// Reads the group block at argument `base`; a block the plan did not write is a device error.
template <class H>
GroupArgs load_group_args(H& hal, uint32_t base = 0) {
    namespace a = group_args;
    if (hal.arg(base + a::magic) != group_magic) {
        detail::Msg m;
        m.s("collectives: core (").u(hal.core_x()).s(",").u(hal.core_y()).s("): argument ").u(base)
            .s(" does not start a group block; pass coll::host::GroupPlan::worker_args(rank) to the kernel");
        detail::die(m);
    }
    GroupArgs g;
    g.transport = Transport(hal.arg(base + a::transport));
    g.rank = hal.arg(base + a::rank);
    g.ranks = hal.arg(base + a::ranks);
    g.shape = GroupShape(hal.arg(base + a::shape));
    g.next_dir = hal.arg(base + a::next_dir);
    g.prev_dir = hal.arg(base + a::prev_dir);
    g.directions = hal.arg(base + a::directions);
    for (uint32_t d = 0; d < max_group_dirs; ++d) g.peer_of_dir[d] = hal.arg(base + a::peer_of_dir + d);
    g.input_l1 = hal.arg(base + a::input_l1);
    g.output_l1 = hal.arg(base + a::output_l1);
    g.scratch_l1 = hal.arg(base + a::scratch_l1);
    g.buffer_bytes = hal.arg(base + a::buffer_bytes);
    g.max_message_bytes = hal.arg(base + a::max_message_bytes);
    g.pipeline_messages = hal.arg(base + a::pipeline_messages);
    g.mesh_cols = hal.arg(base + a::mesh_cols);
    g.link_args = base + hal.arg(base + a::link_args);
    return g;
}

/// True when L offers puts (PUTS above).
template <class L>
inline constexpr bool link_puts = detail::has_puts<L>::value;

#if KCCL_HAS_CONCEPTS
/// C++20 spelling of is_link_v, for `template <kccl::coll::Link L>`.
template <class L>
concept Link = is_link_v<L>;
#endif

}  // namespace kccl::coll
