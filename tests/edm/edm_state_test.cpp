// EDM channel state machines stepped alone against a scripted fake backend (no threads): every
// transition of the sender and the receiver channel, the tx-queue-busy path, clear-before-notify
// order, distinct ack/completion source words, and the idle-count context switch of the loop.
#include <edm/edm.hpp>
#include <edm/host/builder.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace edm = kccl::edm;

namespace {

/// A single core's worth of the contract over a flat memory; records what the EDM does.
struct FakeHal {
    struct Op {
        std::string what;
        uint64_t a = 0, b = 0, c = 0, d = 0;
    };
    std::vector<uint8_t> mem = std::vector<uint8_t>(256 * 1024, 0);
    std::vector<uint32_t> args;
    std::vector<Op> ops;
    bool busy[2] = {false, false};
    uint32_t idles = 0, switches = 0;
    std::function<void(FakeHal&)> on_idle;

    uint32_t core_x() { return 0; }
    uint32_t core_y() { return 9; }
    uint64_t noc_addr(uint32_t x, uint32_t y, uint32_t l1) { return (uint64_t(x) << 48) | (uint64_t(y) << 32) | l1; }
    uint8_t* l1_ptr(uint32_t l1, uint32_t bytes) {
        REQUIRE(size_t(l1) + bytes <= mem.size());
        return mem.data() + l1;
    }
    void noc_write(uint32_t s, uint64_t d, uint32_t n) { ops.push_back({"noc_write", s, d, n}); }
    void noc_read(uint64_t s, uint32_t d, uint32_t n) { ops.push_back({"noc_read", s, d, n}); }
    void noc_write_barrier() {}
    void noc_read_barrier() {}
    void noc_writes_flushed() {}
    void noc_inline_write32(uint64_t d, uint32_t v) { ops.push_back({"inline", d, v}); }
    void sem_inc(uint64_t d, uint32_t n) { ops.push_back({"sem_inc", d, n}); }
    void sem_set(uint32_t a, uint32_t v) {
        ops.push_back({"sem_set", a, v});
        put(a, v);
    }
    void sem_wait(uint32_t, uint32_t) { FAIL("state machines must not block"); }
    void sem_wait_min(uint32_t, uint32_t) { FAIL("state machines must not block"); }
    uint32_t sem_read(uint32_t a) { return get(a); }
    void eth_send(uint32_t q, uint32_t s, uint32_t d, uint32_t n) {
        REQUIRE_FALSE(busy[q]);  // the EDM gates every send on the queue being free
        Op op{"eth_send", q, s, d, n};
        ops.push_back(op);
        sent_words.push_back({get(s + n - 16), get(s + n - 12), get(s + n - 8), get(s + n - 4)});
    }
    bool eth_txq_busy(uint32_t q) { return busy[q]; }
    void context_switch() { ++switches; }
    uint32_t arg(uint32_t i) {
        REQUIRE(i < args.size());
        return args[i];
    }
    void idle() {
        ++idles;
        if (on_idle) on_idle(*this);
    }

    void put(uint32_t a, uint32_t v) { std::memcpy(mem.data() + a, &v, 4); }
    uint32_t get(uint32_t a) {
        uint32_t v;
        std::memcpy(&v, mem.data() + a, 4);
        return v;
    }
    std::vector<std::vector<uint32_t>> sent_words;  // last 16 bytes of each eth_send, as sent
    size_t count(const std::string& what) const {
        size_t n = 0;
        for (const auto& o : ops) n += o.what == what;
        return n;
    }
};
static_assert(kccl::hal::is_backend_v<FakeHal>);

/// One channel, this end a sender (or receiver), 2 buffers of 64 bytes, one worker at (3,4).
edm::host::LinkPlan plan(bool this_end_sends, uint32_t messages, uint32_t buffers = 2, uint32_t workers = 1,
                         edm::Sharing sharing = edm::Sharing::not_shared) {
    edm::host::ChannelSpec c;
    c.buffers = buffers;
    c.packet_bytes = 64;
    c.message_count = messages;
    c.sharing = sharing;
    for (uint32_t k = 0; k < workers; ++k) c.workers.push_back({3 + k, 4, 0x100});
    edm::host::EdmEnd a, b;
    if (this_end_sends) a.add_sender(c), b.add_receiver(c);
    else a.add_receiver(c), b.add_sender(c);
    return edm::host::build_link(a, b, {0x1000, 0x10000});
}

/// Channel 0 of an EDM loaded and initialised from plan p (this end a sender), as the main loop would see it.
edm::SenderChannel<edm::DefaultConfig> loaded_sender(FakeHal& h, const edm::host::LinkPlan& p) {
    h.args = p.edm_args(edm::host::Side::a);
    edm::Edm<> e;
    REQUIRE(e.load(h) == edm::Status::ok);
    e.init(h);
    return e.sender(0);
}

}  // namespace

TEST_CASE("sender channel: every transition in order", "[edm][state]") {
    FakeHal h;
    const auto p = plan(true, 3);
    h.args = p.edm_args(edm::host::Side::a);
    edm::Edm<> e;
    REQUIRE(e.load(h) == edm::Status::ok);
    e.init(h);
    edm::SenderChannel<edm::DefaultConfig> ch = e.sender(0);
    const auto& L = p.layout[0];
    REQUIRE(h.get(L.edm_sem) == 0);

    // signal_worker: clear my semaphore, then notify the worker (clear-before-notify).
    h.ops.clear();
    REQUIRE(ch.step_worker(h));
    REQUIRE(ch.phase == edm::WorkerPhase::wait_worker);
    REQUIRE(h.ops.size() == 2);
    REQUIRE(h.ops[0].what == "sem_set");
    REQUIRE(h.ops[0].a == L.edm_sem);
    REQUIRE(h.ops[1].what == "sem_inc");
    REQUIRE(h.ops[1].a == h.noc_addr(3, 4, 0x100));
    REQUIRE(h.ops[1].b == 1);
    // wait_worker: nothing until the worker increments my semaphore.
    REQUIRE_FALSE(ch.step(h));
    h.put(L.edm_sem, 1);
    REQUIRE(ch.step_worker(h));
    REQUIRE(ch.filled == 1);
    REQUIRE(ch.phase == edm::WorkerPhase::signal_worker);

    // send: blocked while the tx queue is busy, then one send of packet + sync word.
    h.busy[0] = true;
    REQUIRE_FALSE(ch.step_send(h));
    h.busy[0] = false;
    h.ops.clear();
    REQUIRE(ch.step_send(h));
    REQUIRE(h.ops.size() == 1);
    REQUIRE(h.ops[0].what == "eth_send");
    REQUIRE(h.ops[0].b == L.buffers_base);        // from the slot
    REQUIRE(h.ops[0].c == L.buffers_base);        // to the same address on the peer
    REQUIRE(h.ops[0].d == 64 + 16);               // payload + sync word, one packet
    // sync word last: bytes, ack, seq, note (no note written by the worker: a full packet,
    // Signal::next = 1 in bits 0-1, length 64 in bits 2-31)
    REQUIRE(h.sent_words.back() == std::vector<uint32_t>{64, 0, 0, (64u << 2) | 1u});
    REQUIRE(ch.sent == 1);

    // first-level ack (receiver_ack set) frees my copy; completion (bytes_sent cleared) the remote.
    const uint32_t sync = L.buffers_base + 64;
    REQUIRE_FALSE(ch.step_acks(h));
    h.put(sync + 4, 1);
    REQUIRE(ch.step_acks(h));
    REQUIRE(ch.acked == 1);
    REQUIRE(ch.completed == 0);
    h.put(sync, 0);
    h.put(sync + 4, 0);
    REQUIRE(ch.step_acks(h));
    REQUIRE(ch.completed == 1);
    REQUIRE_FALSE(ch.done());
}

TEST_CASE("sender channel: a short message sends its bytes (rounded to 16), then the sync word", "[edm][state]") {
    // Lengths 20 (two Ethernet words of payload), 0 (sync word only) and 64 (the full packet:
    // one contiguous send), each announced by the worker's note.
    struct Case { uint32_t length, payload_send; };
    for (const Case c : {Case{20, 32}, Case{0, 0}, Case{64, 0}}) {
        INFO("message length " << c.length);
        FakeHal h;
        const auto p = plan(true, 3);
        auto ch = loaded_sender(h, p);
        const auto& L = p.layout[0];
        REQUIRE(ch.step_worker(h));
        h.put(L.signal_base, edm::make_note(edm::Signal::next, c.length));
        h.put(L.edm_sem, 1 + edm::note_written);
        REQUIRE(ch.step_worker(h));
        h.ops.clear();
        REQUIRE(ch.step_send(h));
        const uint32_t sync = L.buffers_base + 64;
        const std::vector<uint32_t> word{64, 0, 0, (c.length << 2) | 1u};
        if (c.length == 64) {
            REQUIRE(h.ops.size() == 1);
            REQUIRE(h.ops[0].b == L.buffers_base);
            REQUIRE(h.ops[0].d == 64 + 16);
        } else {
            REQUIRE(h.ops.size() == (c.payload_send ? 2u : 1u));
            if (c.payload_send) {
                REQUIRE(h.ops[0].what == "eth_send");
                REQUIRE(h.ops[0].a == 0);                 // queue 0, like the sync word: in order (E2)
                REQUIRE(h.ops[0].b == L.buffers_base);
                REQUIRE(h.ops[0].c == L.buffers_base);
                REQUIRE(h.ops[0].d == c.payload_send);
            }
            REQUIRE(h.ops.back().what == "eth_send");     // the sync word last
            REQUIRE(h.ops.back().a == 0);
            REQUIRE(h.ops.back().b == sync);
            REQUIRE(h.ops.back().c == sync);
            REQUIRE(h.ops.back().d == 16);
        }
        REQUIRE(h.sent_words.back() == word);
    }
}

TEST_CASE("sender channel: multi-buffering bounds and completion", "[edm][state]") {
    FakeHal h;
    const auto p = plan(true, 3, /*buffers=*/2);
    h.args = p.edm_args(edm::host::Side::a);
    edm::Edm<> e;
    REQUIRE(e.load(h) == edm::Status::ok);
    e.init(h);
    auto ch = e.sender(0);
    const auto& L = p.layout[0];
    auto fill_one = [&] {
        REQUIRE(ch.step_worker(h));  // notify
        h.put(L.edm_sem, 1);
        REQUIRE(ch.step_worker(h));  // filled
    };
    fill_one();
    fill_one();
    // Two slots filled, none acked: the worker gets no third grant.
    REQUIRE_FALSE(ch.step_worker(h));
    REQUIRE(ch.step_send(h));
    REQUIRE(ch.step_send(h));
    REQUIRE_FALSE(ch.step_send(h));  // nothing more filled
    // Ack + complete message 0 (slot 0): a grant and then a send of message 2 become possible.
    h.put(L.buffers_base + 64 + 4, 1);
    REQUIRE(ch.step_acks(h));
    fill_one();
    REQUIRE_FALSE(ch.step_send(h));  // slot 0's remote copy not completed yet
    h.put(L.buffers_base + 64, 0);
    REQUIRE(ch.step_acks(h));
    REQUIRE(ch.step_send(h));
    REQUIRE(ch.sent == 3);
    REQUIRE(ch.phase == edm::WorkerPhase::finished);  // message count 3 reached
    // complete everything
    for (uint32_t m = 1; m < 3; ++m) {
        const uint32_t sync = L.buffers_base + (m % 2) * L.slot_bytes + 64;
        h.put(sync, 0);
        h.put(sync + 4, 0);
        while (ch.step_acks(h)) {}
    }
    REQUIRE(ch.completed == 3);
    REQUIRE(ch.done());
}

TEST_CASE("receiver channel: every transition in order / distinct ack and completion sources", "[edm][state]") {
    FakeHal h;
    const auto p = plan(false, 2);
    h.args = p.edm_args(edm::host::Side::a);
    edm::Edm<> e;
    REQUIRE(e.load(h) == edm::Status::ok);
    e.init(h);
    auto ch = e.receiver(0);
    const auto& L = p.layout[0];
    const uint32_t sync = L.buffers_base + 64;
    const uint32_t ack_src = p.reserved_addr + edm::reserved_ack_src, completion_src = p.reserved_addr + edm::reserved_completion_src;
    REQUIRE(ack_src != completion_src);

    REQUIRE_FALSE(ch.step(h));  // nothing arrived
    h.put(sync, 64);            // the sync word lands (bytes_sent)
    REQUIRE(ch.step_receive(h));
    REQUIRE(ch.received == 1);
    // first-level ack: busy queue holds it back
    h.busy[0] = true;
    REQUIRE_FALSE(ch.step_ack(h));
    h.busy[0] = false;
    h.ops.clear();
    REQUIRE(ch.step_ack(h));
    REQUIRE(h.ops[0].what == "eth_send");
    REQUIRE(h.ops[0].b == ack_src);
    REQUIRE(h.ops[0].c == sync);
    REQUIRE(h.sent_words.back()[1] != 0);  // receiver_ack set
    // workers: clear, then notify
    h.ops.clear();
    REQUIRE(ch.step_worker(h));
    REQUIRE(h.ops[0].what == "sem_set");
    REQUIRE(h.ops[1].what == "sem_inc");
    REQUIRE(h.ops[1].b == 1);  // value: a payload (next)
    REQUIRE_FALSE(ch.step_worker(h));
    REQUIRE_FALSE(ch.step_complete(h));  // workers not done
    h.put(L.edm_sem, 1);
    REQUIRE(ch.step_worker(h));
    REQUIRE(ch.consumed == 1);
    // completion: clears my sync word first, then sends zeros from the completion source
    h.busy[0] = true;
    REQUIRE_FALSE(ch.step_complete(h));
    h.busy[0] = false;
    h.ops.clear();
    REQUIRE(ch.step_complete(h));
    REQUIRE(h.get(sync) == 0);
    REQUIRE(h.ops.back().what == "eth_send");
    REQUIRE(h.ops.back().b == completion_src);
    REQUIRE(h.sent_words.back() == std::vector<uint32_t>{0, 0, 0, 0});
    REQUIRE(ch.completed == 1);
    REQUIRE_FALSE(ch.done());  // 2 messages expected
}

TEST_CASE("round-robin sharing notifies one worker per message / not-shared all", "[edm][state]") {
    for (auto sharing : {edm::Sharing::round_robin, edm::Sharing::not_shared}) {
        FakeHal h;
        const auto p = plan(true, 6, 2, /*workers=*/3, sharing);
        h.args = p.edm_args(edm::host::Side::a);
        edm::Edm<> e;
        REQUIRE(e.load(h) == edm::Status::ok);
        e.init(h);
        auto ch = e.sender(0);
        const auto& L = p.layout[0];
        for (uint32_t m = 0; m < 2; ++m) {
            h.ops.clear();
            REQUIRE(ch.step_worker(h));
            std::vector<uint64_t> notified;
            for (const auto& o : h.ops)
                if (o.what == "sem_inc") notified.push_back(o.a);
            if (sharing == edm::Sharing::round_robin) {
                REQUIRE(notified == std::vector<uint64_t>{h.noc_addr(3 + m, 4, 0x100)});
                h.put(L.edm_sem, 1);
            } else {
                REQUIRE(notified.size() == 3);
                h.put(L.edm_sem, 2);
                REQUIRE_FALSE(ch.step_worker(h));  // waits for all three
                h.put(L.edm_sem, 3);
            }
            REQUIRE(ch.step_worker(h));
        }
    }
}

namespace {
struct SwitchEvery10 : edm::DefaultConfig {
    static constexpr uint32_t idle_iterations_per_context_switch = 10;
};
}  // namespace

TEST_CASE("the main loop context-switches after a counted number of idle iterations", "[edm][state]") {
    // A receiver of one message. The "link" delivers the packet after 35 idle iterations, the
    // worker answers after 25 more: the loop must switch 3 + 2 times, and call idle() each time.
    FakeHal h;
    const auto p = plan(false, 1);
    h.args = p.edm_args(edm::host::Side::a);
    const auto& L = p.layout[0];
    uint32_t streak = 0;
    int stage = 0;
    h.on_idle = [&](FakeHal& f) {
        ++streak;
        if (stage == 0 && streak == 35) f.put(L.buffers_base + 64, 64), stage = 1, streak = 0;
        else if (stage == 1 && streak == 25 && f.get(L.edm_sem) == 0) f.put(L.edm_sem, 1), stage = 2;
    };
    edm::Edm<SwitchEvery10> e;
    REQUIRE(e.load(h) == edm::Status::ok);
    e.init(h);
    e.main_loop(h);
    REQUIRE(e.all_done());
    REQUIRE(h.idles == 60);
    REQUIRE(h.switches == 5);
    REQUIRE(e.context_switches() == 5);
}

namespace {
struct Small : edm::DefaultConfig {
    static constexpr uint32_t max_channels = 1;
    static constexpr uint32_t max_workers_per_channel = 1;
};
}  // namespace

TEST_CASE("the EDM rejects args its Config cannot hold", "[edm][state][errors]") {
    FakeHal h;
    edm::host::ChannelSpec c;
    c.message_count = 1;
    c.packet_bytes = 64;
    c.workers = {{1, 1, 0x100}, {2, 1, 0x100}};
    edm::host::EdmEnd a, b;
    a.add_sender(c);
    b.add_receiver(c);
    h.args = edm::host::build_link(a, b, {0x1000, 0x10000}).edm_args(edm::host::Side::a);
    edm::Edm<Small> e;
    REQUIRE(e.load(h) == edm::Status::too_many_workers);
    c.workers = {{1, 1, 0x200}, {2, 1, 0x200}};
    a.add_sender(c);
    b.add_receiver(c);
    h.args = edm::host::build_link(a, b, {0x1000, 0x10000}).edm_args(edm::host::Side::a);
    REQUIRE(e.load(h) == edm::Status::too_many_channels);
}

TEST_CASE("the EDM rejects zero channels and a sharing mode that does not exist", "[edm][state][errors]") {
    FakeHal h;
    edm::host::ChannelSpec c;
    c.message_count = 1;
    c.packet_bytes = 64;
    c.workers = {{1, 1, 0x100}};
    edm::host::EdmEnd a, b;
    a.add_sender(c);
    b.add_receiver(c);
    const auto good = edm::host::build_link(a, b, {0x1000, 0x10000}).edm_args(edm::host::Side::a);
    edm::Edm<> e;
    h.args = good;
    REQUIRE(e.load(h) == edm::Status::ok);
    h.args = good;
    h.args[edm::args::num_channels] = 0;
    REQUIRE(e.load(h) == edm::Status::bad_layout);
    h.args = good;
    h.args[edm::args::first_channel + edm::args::ch_sharing] = 2;
    REQUIRE(e.load(h) == edm::Status::bad_layout);
    REQUIRE(std::string(edm::status_message(edm::Status::bad_layout)).find("sharing mode other than 0/1") != std::string::npos);
}
