// The executor checks its parameters: on the device (every execute* reports a bad ExecParams
// through the device error path, naming the rank and the value) and on the host before launch
// (host::require_exec_params throws PlanError with the same sentence). The host helpers never wrap
// on huge counts (fragment_elems, choose_chunking, grid, scratch_chunks, validate).
#include <catch2/catch.hpp>

#include "e2e_bed.hpp"

#include <collectives/host/plan.hpp>

#include <string>

using namespace kccl::coll;
namespace cb = kccl::emu::collective;
namespace emu = kccl::emu;

namespace {
using F32Sum = Reducer<float, RedOp::sum>;

/// A valid all_gather of 4 ranks, 2 chunks of 8 floats per fragment, disjoint buffers.
ExecParams good(Op op = Op::all_gather, uint32_t rank = 1) {
    ExecParams p;
    p.shape.op = op;
    p.shape.method = Method::ring_cw;
    p.shape.ranks = 4;
    p.shape.chunks = 2;
    p.rank = rank;
    p.chunk_elems = 8;
    p.count = op == Op::all_gather || op == Op::broadcast ? 16 : 64;
    p.buf = {0x10000, 0x20000, 0x30000, 0x10000};
    return p;
}

std::string host_error(const ExecParams& p) {
    try {
        host::require_exec_params<F32Sum>(p);
    } catch (const host::PlanError& e) {
        return e.what();
    }
    return "";
}

/// Runs an all_gather / broadcast of 4 ranks on the bed with `change` applied to rank 2's
/// ExecParams only; returns the report.
template <class Change>
emu::RunReport run_with(Transport t, Op op, Change change) {
    cb::GroupOptions bo;
    bo.transport = t;
    bo.ranks = 4;
    bo.message_bytes = 64;
    bo.slots = 4;
    Shape sh;
    sh.op = op;
    sh.method = Method::ring_cw;
    sh.ranks = 4;
    const cb::Layout L = cb::make_layout(sh, 64, cb::max_chunk_elems(bo, 4));
    bo.buffer_bytes = cb::buffer_bytes_for(L, 4);
    cb::Group bed(bo);
    bed.add([L, change](auto&, auto& link, const GroupArgs& g) -> uint64_t {
        ExecParams ep = e2e::exec_params(L, g);
        if (g.rank == 2) change(ep);
        execute_any<F32Sum>(link, ep, cb::dirs_of(g));
        link.quiesce();
        return 0;
    });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(3000);
    return bed.run(ro);
}

/// The failed core is rank 2's worker and its message is `want`.
void require_rank2_error(const emu::RunReport& rep, const std::string& want) {
    INFO(rep.summary());
    REQUIRE_FALSE(rep.ok());
    CHECK_THAT(rep.first_error(), Catch::Contains("device check failed: collectives: executor: rank 2 (") &&
                                      Catch::Contains(want));
}
}  // namespace

TEST_CASE("executor params: the host rejects each bad parameter with its value", "[collectives][params]") {
    CHECK(host_error(good()) == "");
    CHECK(host_error(good(Op::all_reduce)) == "");
    {
        ExecParams p = good(Op::broadcast);
        p.shape.root = 4;
        CHECK(host_error(p) == "collectives: executor: rank 1 (broadcast ring_cw): root 4 is out of range (allowed: root < ranks = 4)");
    }
    {
        ExecParams p = good();
        p.rank = 7;
        CHECK(host_error(p) == "collectives: executor: rank 7 (all_gather ring_cw): rank 7 is out of range (allowed: rank < ranks = 4)");
    }
    {
        ExecParams p = good(Op::send_recv);
        p.shape.peer = 9;
        CHECK_THAT(host_error(p), Catch::EndsWith("send_recv peer 9 is out of range (allowed: peer < ranks = 4)"));
    }
    {
        ExecParams p = good();
        p.chunk_elems = 0;
        CHECK(host_error(p) == "collectives: executor: rank 1 (all_gather ring_cw): chunk_elems is 0 but the tensor has 16 "
                               "elements to move (allowed: chunk_elems >= 1; choose_chunking picks it)");
        p.count = 0;  // nothing to move: empty chunks are fine
        CHECK(host_error(p) == "");
    }
    {
        ExecParams p = good();
        p.shape.chunks = 0;
        CHECK_THAT(host_error(p), Catch::EndsWith("shape.chunks is 0 (allowed: at least 1 chunk per fragment)"));
    }
    {
        // all_gather's output (4 ranks x 2 chunks x 8 floats = 256 bytes) starts 16 bytes into
        // its input (2 chunks x 8 floats = 64 bytes).
        ExecParams p = good();
        p.buf.output = p.buf.input + 16;
        CHECK(host_error(p) == "collectives: executor: rank 1 (all_gather ring_cw): the input buffer [0x10000, +64 bytes) "
                               "and the output buffer [0x10010, +256 bytes) overlap (allowed: disjoint buffers; output == "
                               "input where in_place_safe(op, method))");
        p.buf.output = p.buf.input;  // all_gather ring_cw runs in place
        CHECK(host_error(p) == "");
        p.shape.method = Method::line;  // all_gather line does not
        CHECK_THAT(host_error(p), Catch::Contains("rank 1 (all_gather line): the input buffer [0x10000, +64 bytes) and "
                                                  "the output buffer [0x10000, +256 bytes) overlap"));
        p.shape.method = Method::ring_cw;
        p.buf.output = p.buf.input + 64;  // adjacent: fine
        CHECK(host_error(p) == "");
    }
    {
        // scratch (all_gather: 2 x ranks x chunks = 16 chunks of 32 bytes) ends inside the output
        ExecParams p = good();
        p.buf.scratch = p.buf.output - 16;
        CHECK_THAT(host_error(p), Catch::Contains("the output buffer [0x20000, +256 bytes) and the scratch buffer "
                                                  "[0x1fff0, +512 bytes) overlap"));
    }
    {
        // A prepared input (square_add prepares) elsewhere must not overlap the output either;
        // equal to the input is the usual case.
        using SqAdd = Reducer<float, RedOp::square_add>;
        ExecParams p = good(Op::all_reduce);
        p.buf.prepared = p.buf.output + 32;
        try {
            host::require_exec_params<SqAdd>(p);
            FAIL("no error");
        } catch (const host::PlanError& e) {
            CHECK_THAT(std::string(e.what()), Catch::Contains("the output buffer [0x20000, +256 bytes) and the prepared input buffer [0x20020, +256 bytes) overlap"));
        }
        p.buf.prepared = p.buf.input;
        CHECK_NOTHROW(host::require_exec_params<SqAdd>(p));
        p.buf.prepared = p.buf.output + 32;
        CHECK_NOTHROW(host::require_exec_params<F32Sum>(p));  // sum does not prepare: the buffer is unused
    }
    {
        // Buffers past the 32-bit L1 address space: the executor's address arithmetic would wrap.
        ExecParams p = good();
        p.chunk_elems = 0x20000000;  // 2 chunks x 2^29 floats = 4 GiB of input
        CHECK(host_error(p) == "collectives: executor: rank 1 (all_gather ring_cw): the input buffer [0x10000, "
                               "+4294967296 bytes) (2 chunks x 536870912 elements x 4 bytes) ends beyond the 32-bit L1 "
                               "address space (allowed: base + bytes <= 2^32)");
        p = good();
        p.buf.output = 0xFFFFFF00u;  // 256 bytes of output from here end exactly at 2^32: fine
        CHECK(host_error(p) == "");
        p.buf.output = 0xFFFFFF10u;
        CHECK_THAT(host_error(p), Catch::Contains("the output buffer [0xffffff10, +256 bytes)") &&
                                      Catch::Contains("ends beyond the 32-bit L1 address space"));
    }
    {
        // A chunk grid beyond 2^32 - 1 chunks (ranks x chunks wraps in 32 bits).
        ExecParams p = good(Op::all_reduce);
        p.shape.ranks = 65536;
        p.shape.chunks = 65536;
        p.rank = 3;
        CHECK(host_error(p) == "collectives: executor: rank 3 (all_reduce ring_cw): the input buffer's chunk grid has "
                               "4294967296 chunks (ranks 65536 x chunks 65536; allowed: at most 2^32 - 1)");
    }
    {
        // What the shape itself does not support is the algorithm's sentence.
        ExecParams p = good();
        p.shape.topo = Topology::mesh;
        p.shape.rows = 2;
        p.shape.cols = 2;
        CHECK_THAT(host_error(p), Catch::StartsWith("collectives: executor: rank 1 (all_gather ring_cw): the shape is not supported: "));
    }
}

TEST_CASE("executor params: host helpers never wrap on huge counts", "[collectives][params]") {
    // fragment_elems: ceil(count / ranks) without count + ranks - 1 (which wrapped to 1 / 3 = 0).
    CHECK(fragment_elems(Op::all_reduce, 3, 0xFFFFFFFFu) == 1431655765u);
    CHECK(fragment_elems(Op::all_reduce, 4, 0xFFFFFFFFu) == 1073741824u);
    // choose_chunking: (f + m - 1) / m wrapped for f near 2^32.
    const Chunking c = choose_chunking(Op::all_gather, 4, 0xFFFFFFFFu, 1024);
    CHECK(c.chunks == 4194304u);
    CHECK(c.chunk_elems == 1024u);
    CHECK(uint64_t(c.chunks) * c.chunk_elems >= 0xFFFFFFFFull);
    const Chunking one = choose_chunking(Op::broadcast, 2, 0xFFFFFFFFu, 0xFFFFFFFFu);
    CHECK(one.chunks == 1u);
    CHECK(one.chunk_elems == 0xFFFFFFFFu);
    // grid / scratch_chunks saturate instead of wrapping; the wide forms are exact.
    Shape sh;
    sh.op = Op::all_reduce;
    sh.ranks = 65536;
    sh.chunks = 65536;
    CHECK(grid_wide(sh, Buf::input) == (uint64_t(1) << 32));
    CHECK(grid(sh, Buf::input) == 0xFFFFFFFFu);
    CHECK(scratch_chunks_wide(sh) == (uint64_t(1) << 33));
    CHECK(scratch_chunks(sh) == 0xFFFFFFFFu);
    sh.method = Method::broadcast_local_reduce;
    sh.ranks = 70000;
    sh.chunks = 1;
    CHECK(scratch_chunks_wide(sh) == uint64_t(70000) * 70000);
    // validate() rejects a grid that does not fit 32 bits, and a mesh whose rows x cols wraps.
    sh.method = Method::ring_cw;
    sh.ranks = 65536;
    sh.chunks = 65536;
    CHECK_THAT(std::string(validate(sh) ? validate(sh) : ""), Catch::StartsWith("The chunk grid is too large"));
    sh.chunks = 1;
    sh.op = Op::all_gather;
    CHECK(validate(sh) == nullptr);  // 65536 x 1 chunks, scratch 131072: fine
    Shape m;
    m.op = Op::all_gather;
    m.method = Method::mesh_2d;
    m.topo = Topology::mesh;
    m.ranks = 65536;
    m.rows = 65536;
    m.cols = 65537;  // 65536 x 65537 = 65536 mod 2^32
    CHECK_THAT(std::string(validate(m) ? validate(m) : ""), Catch::StartsWith("A mesh or torus topology needs rows * cols == ranks"));
}

TEST_CASE("executor params: the device reports each bad parameter naming the rank", "[collectives][params]") {
    for (Transport t : {Transport::ipcq, Transport::edm}) {
        INFO(cb::name(t));
        // all_gather of 64 floats per rank on 4 ranks, 64-byte messages: 4 chunks of 16 floats
        // per fragment (64 x 4 = 256 bytes of input, 1024 of output).
        require_rank2_error(run_with(t, Op::all_gather, [](ExecParams& p) { p.buf.output = p.buf.input + 16; }),
                            "the input buffer [0x");
        require_rank2_error(run_with(t, Op::all_gather, [](ExecParams& p) { p.buf.output = p.buf.input + 16; }),
                            ", +256 bytes) and the output buffer [0x");
        require_rank2_error(run_with(t, Op::broadcast, [](ExecParams& p) { p.shape.root = 4; }),
                            "root 4 is out of range (allowed: root < ranks = 4)");
        require_rank2_error(run_with(t, Op::all_gather, [](ExecParams& p) { p.chunk_elems = 0; }),
                            "chunk_elems is 0 but the tensor has 64 elements to move");
        require_rank2_error(run_with(t, Op::all_gather, [](ExecParams& p) { p.chunk_elems = 0x40000000; }),
                            "(4 chunks x 1073741824 elements x 4 bytes) ends beyond the 32-bit L1 address space");
    }
    // The good parameters run (the same bed, no change).
    const emu::RunReport ok = run_with(Transport::ipcq, Op::all_gather, [](ExecParams&) {});
    INFO(ok.summary());
    CHECK(ok.ok());
}
