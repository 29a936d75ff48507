/* benchmarks/mpi/mpi_coll.c — MPI_Allreduce and MPI_Allgather of floats (sum) in the nccl-tests
 * convention kccl's benchmarks use: the host baseline the emulated collectives are compared with
 * (benchmarks/mpi/coll_vs_mpi.cpp runs it through mpirun beside each of its own runs;
 * scripts/coll_vs_mpi.sh builds and runs both and prints the ratios).
 *
 *   mpirun -np 8 kccl_mpi_coll OP MIN_BYTES [MAX_BYTES [ITERS [WARMUP]]]
 *
 * OP: all_reduce, all_gather or both. Sizes double from MIN to MAX (default MAX = MIN). size = the
 * tensor's bytes (all_reduce) or the gathered output's bytes (all_gather: each rank contributes
 * size / ranks). Per size and op: WARMUP untimed calls (default 1), a barrier, then ITERS timed
 * calls (default 5); time = the slowest rank's time / ITERS. busbw = size / time x 2(p-1)/p
 * (all_reduce) or (p-1)/p (all_gather). Output, one line per op and size on rank 0:
 *   mpi <all_reduce|all_gather> <bytes> <us> <busGBps>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run(int op, const float* in, float* out, size_t count, int p) {
    if (op == 0) MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else MPI_Allgather(in, (int)(count / (size_t)p), MPI_FLOAT, out, (int)(count / (size_t)p), MPI_FLOAT, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: kccl_mpi_coll all_reduce|all_gather|both MIN_BYTES [MAX_BYTES [ITERS [WARMUP]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int first = strcmp(argv[1], "all_gather") == 0 ? 1 : 0;
    const int last = strcmp(argv[1], "all_reduce") == 0 ? 0 : 1;
    const size_t lo = strtoull(argv[2], 0, 0);
    const size_t hi = argc > 3 ? strtoull(argv[3], 0, 0) : lo;
    const int iters = argc > 4 ? atoi(argv[4]) : 5;
    const int warmup = argc > 5 ? atoi(argv[5]) : 1;
    if (lo == 0 || hi < lo || iters < 1 || warmup < 0) MPI_Abort(MPI_COMM_WORLD, 2);
    float* in = malloc(hi);
    float* out = malloc(hi);
    if (!in || !out) MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < hi / 4; ++i) in[i] = (float)(rank + (int)(i % 7)), out[i] = 0;
    static const char* const names[2] = {"all_reduce", "all_gather"};
    for (size_t bytes = lo; bytes <= hi; bytes *= 2) {
        for (int op = first; op <= last; ++op) {
            const size_t count = bytes / 4;
            for (int i = 0; i < warmup; ++i) run(op, in, out, count, p);
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            for (int i = 0; i < iters; ++i) run(op, in, out, count, p);
            const double t = MPI_Wtime() - t0;
            double tmax = 0;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                const double us = tmax / iters * 1e6;
                const double bus = op == 0 ? 2.0 * (p - 1) / p : (double)(p - 1) / p;
                printf("mpi %s %zu %.1f %.4f\n", names[op], bytes, us, (double)bytes / (us * 1e3) * bus);
                fflush(stdout);
            }
        }
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
