/*
 * gemm.c - the FP32 GEMM operator: splits a (batched) product into blocks of MC rows x NC columns,
 * runs each block over K in KC-deep slices (BLIS order: K slice -> pack the B tile -> NR panels ->
 * MR tiles, so a B micro-panel stays in L1 across the MR tiles and the A block in L2 across the
 * panels), and spreads the blocks over the thread pool's threads.
 *
 * Threads: each block is a pool item; the pool deals them in contiguous ranges, one per thread, and
 * a thread that runs out takes blocks from the others' ends, so a descheduled thread delays only the
 * block it is running. Each thread packs into its own buffer in scratch. When the scratch holds fewer
 * buffers than there are threads, the blocks are dealt instead to S "slots" (one pool task each). KC depends only
 * on K and the cache, never on S, and each element's K order is fixed, so results are the same for
 * any thread count. S is the pool's thread count, or fewer when the scratch has no room for more.
 */
#include <string.h>

#include "core/thread_pool.h"

#include "backends/cpu/gemm.h"
#include "core/cpu.h"

typedef struct blocking {
    size_t kc, mc, nc;
} blocking;

static size_t round_up(size_t v, size_t q) { return (v + q - 1) / q * q; }
static size_t round_down_min(size_t v, size_t q) { return v < q ? q : v / q * q; }
static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* Blocks of equal size (multiples of q) covering n, at most `cap` each. */
static size_t even_block(size_t n, size_t cap, size_t q) {
    const size_t blocks = (n + cap - 1) / cap;
    return round_up((n + blocks - 1) / blocks, q);
}

/* True when B tiles are built at run time into the slot's buffer. */
static bool packs_b_at_run(const tc__gemm_f32_problem *p) { return p->pack_b != NULL || !p->b_packed; }

typedef struct cache_sizes {
    size_t l1, l2;
} cache_sizes;

static cache_sizes caches(void) {
    const tc__cpu *cpu = tc__cpu_get();
    return (cache_sizes){cpu->l1d_bytes ? cpu->l1d_bytes : 32768, cpu->l2_bytes ? cpu->l2_bytes : 1048576};
}

/* The deepest K slice: a B micro-panel (KC x NR) fills half of L1; the rest holds A rows and C. */
static size_t kc_max(const tc__gemm_config *cfg, cache_sizes c) {
    const size_t kc0 = c.l1 / 2 / (cfg->nr * sizeof(float));
    return kc0 < 32 ? 32 : (kc0 > 1024 ? 1024 : kc0 / 8 * 8);
}

/* KC, MC, NC for one thread from the cache sizes (before splitting the work over threads); MC and NC capped further by
 * the problem's shifts (a tuned blocking). */
static blocking cache_blocks(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg) {
    const cache_sizes cs = caches();
    const size_t kc0 = kc_max(cfg, cs);
    blocking b;
    if (p->k <= kc0) {
        b.kc = p->k;
    } else { /* equal slices, so the last one is not a sliver */
        const size_t nkb = (p->k + kc0 - 1) / kc0;
        b.kc = min_sz(round_up((p->k + nkb - 1) / nkb, 8), kc0);
    }
    const size_t kc_bytes = (b.kc ? b.kc : 1) * sizeof(float);
    /* The A block (MC x KC) fills half of L2, a runtime B tile (KC x NC) a quarter. */
    b.mc = even_block(p->m ? p->m : 1, round_down_min((cs.l2 / 2 / kc_bytes) >> p->mc_shift, cfg->mr), cfg->mr);
    b.nc = even_block(p->n ? p->n : 1, round_down_min((cs.l2 / 4 / kc_bytes) >> p->nc_shift, cfg->nr), cfg->nr);
    return b;
}

int tc__gemm_f32_blockings(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg, tc__gemm_blocking *out, int cap) {
    int n = 0;
    blocking seen[(TC__GEMM_MAX_SHIFT + 1) * (TC__GEMM_MAX_SHIFT + 1)];
    for (uint8_t s = 0; s <= 2 * TC__GEMM_MAX_SHIFT && n < cap; s++) /* fewer shifts first: the default leads */
        for (uint8_t ms = 0; ms <= TC__GEMM_MAX_SHIFT && n < cap; ms++) {
            if (s < ms || s - ms > TC__GEMM_MAX_SHIFT) continue;
            tc__gemm_f32_problem q = *p;
            q.mc_shift = ms;
            q.nc_shift = (uint8_t)(s - ms);
            const blocking b = cache_blocks(&q, cfg);
            bool dup = false;
            for (int i = 0; i < n && !dup; i++) dup = seen[i].mc == b.mc && seen[i].nc == b.nc;
            if (dup) continue;
            seen[n] = b;
            out[n++] = (tc__gemm_blocking){.mc_shift = q.mc_shift, .nc_shift = q.nc_shift};
        }
    return n;
}

bool tc__gemm_blocking_check(const void *config, tc__err *err) {
    tc__gemm_blocking b;
    memcpy(&b, config, sizeof b);
    if (b.mc_shift > TC__GEMM_MAX_SHIFT || b.nc_shift > TC__GEMM_MAX_SHIFT || b.reserved[0] || b.reserved[1]) {
        tc__fail(err, TC_STATUS_CORRUPT_FILE, "GEMM blocking shifts %u and %u (at most %d), reserved bytes %u %u",
                 b.mc_shift, b.nc_shift, TC__GEMM_MAX_SHIFT, b.reserved[0], b.reserved[1]);
        return false;
    }
    return true;
}

void tc__gemm_blocking_apply(tc__gemm_f32_problem *p, const void *config) {
    if (config == NULL) return;
    tc__gemm_blocking b;
    memcpy(&b, config, sizeof b);
    p->mc_shift = b.mc_shift <= TC__GEMM_MAX_SHIFT ? b.mc_shift : 0; /* (checked at load) */
    p->nc_shift = b.nc_shift <= TC__GEMM_MAX_SHIFT ? b.nc_shift : 0;
}

static size_t batch_count(const tc__gemm_f32_problem *p) {
    size_t n = 1;
    for (int d = 0; d < p->nb; d++)
        n *= p->bdims[d];
    return n;
}

/*
 * Splits the work into more blocks until it deals evenly to `slots` threads: every slot gets the
 * same number of (equal) blocks, or at least four. N is split first (each thread then packs its
 * own columns of B once), M when N has no panels left to split.
 */
static void split_for_threads(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg, size_t batch, size_t slots,
                              blocking *b) {
    if (slots <= 1) return;
    const size_t n_panels = (p->n + cfg->nr - 1) / cfg->nr, m_tiles = (p->m + cfg->mr - 1) / cfg->mr;
    size_t nb = (p->n + b->nc - 1) / b->nc, mb = (p->m + b->mc - 1) / b->mc;
    for (;;) {
        const size_t w = batch * mb * nb;
        if (w >= 4 * slots || w % slots == 0) break;
        if (nb < n_panels)
            nb++;
        else if (mb < m_tiles)
            mb++;
        else
            break;
    }
    b->nc = round_up((p->n + nb - 1) / nb, cfg->nr);
    b->mc = round_up((p->m + mb - 1) / mb, cfg->mr);
}

/*
 * Floats of one slot's B tile buffer: a bound on KC x NC that only grows with K and N (scratch is
 * sized at a profile's largest shapes and must fit every smaller one): KC <= min(K, KC max), and
 * KC x NC <= max(KC max x NR, L2 / 16) by the choice of NC. At least one when B tiles are built.
 */
static size_t slot_floats(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg) {
    if (!packs_b_at_run(p)) return 0;
    const cache_sizes cs = caches();
    const size_t kc0 = kc_max(cfg, cs), by_shape = min_sz(p->k, kc0) * round_up(p->n, cfg->nr);
    const size_t by_cache = kc0 * cfg->nr > cs.l2 / 16 ? kc0 * cfg->nr : cs.l2 / 16;
    const size_t f = round_up(min_sz(by_shape, by_cache), 16);
    return f ? f : 16;
}

tc__gemm_f32_problem tc__gemm_f32_problem_init(size_t m, size_t n, size_t k) {
    tc__gemm_f32_problem p = {0};
    p.m = m;
    p.n = n;
    p.k = k;
    p.ldc = n;
    p.rs_a = k;
    p.cs_a = 1;
    p.rs_b = n;
    p.cs_b = 1;
    p.epi.alpha = 1.0f;
    p.epi.res_scale = 1.0f;
    p.epi.act = TC__ACT_NONE;
    return p;
}

size_t tc__gemm_f32_scratch_bytes(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg, size_t max_threads) {
    return (max_threads ? max_threads : 1) * slot_floats(p, cfg) * sizeof(float) + 64;
}

typedef struct job {
    const tc__gemm_f32_problem *p;
    const tc__gemm_config *cfg;
    blocking b;
    size_t mblocks, nblocks, items, slots;
    float *bufs;
    size_t buf_stride; /* floats per slot */
    size_t *keys;      /* by thread: the B tile in its buffer (run_item_on) */
} job;

/* Threads up to which blocks are items of their own (run_item_on), each thread keeping its packed-B key. */
#define GEMM_KEYED_THREADS 256

typedef struct batch_offsets {
    size_t a, b, c, res, bias_m, bias_n;
} batch_offsets;

static batch_offsets offsets_of(const tc__gemm_f32_problem *p, size_t t) {
    batch_offsets o = {0};
    for (int d = p->nb - 1; d >= 0; d--) {
        const size_t i = t % p->bdims[d];
        t /= p->bdims[d];
        o.a += i * p->a_bs[d];
        o.b += i * p->b_bs[d];
        o.c += i * p->c_bs[d];
        o.res += i * p->res_bs[d];
        o.bias_m += i * p->bias_m_bs[d];
        o.bias_n += i * p->bias_n_bs[d];
    }
    return o;
}

/* The cache lines of the packed-B micro-panel after the one at (jr, k0) in a block's order (the next column panel, or
 * the first of the next K slice), and how many of them to prefetch before each of the row tiles. */
typedef struct prefetch_plan {
    const float *base;
    size_t lines, per_tile, last; /* last: the panel's last float, for its last, partial line */
} prefetch_plan;

static prefetch_plan next_panel(const float *b, size_t K, size_t nr, size_t j_begin, size_t j_end, size_t jr, size_t k0,
                                size_t kcur, size_t kc, size_t rows, size_t mr) {
    prefetch_plan pf = {0};
    if (rows == 0) return pf;
    size_t jn = jr + nr, kn = k0;
    if (jn >= j_end) { /* the next K slice's first panel */
        jn = j_begin;
        kn = k0 + kcur;
        if (kn >= K) return pf;
    }
    const size_t w = min_sz(nr, j_end - jn), kk = min_sz(kc, K - kn), tiles = (rows + mr - 1) / mr;
    if (kk * w == 0) return pf;
    pf.base = b + jn * K + kn * w;
    pf.lines = (kk * w + 15) / 16;
    pf.per_tile = (pf.lines + tiles - 1) / tiles;
    pf.last = kk * w - 1;
    return pf;
}

/* Computes rows [i_begin, i_end) x columns [j_begin, j_end) of batch matrix t. *packed_key names
 * the B tile already in buf (reused when K is a single slice), SIZE_MAX for none. */
static void run_block(const job *jb, size_t t, size_t i_begin, size_t i_end, size_t j_begin, size_t j_end, float *buf,
                      size_t *packed_key) {
    const tc__gemm_f32_problem *p = jb->p;
    const size_t mr = jb->cfg->mr, nr = jb->cfg->nr, K = p->k, kc = jb->b.kc;
    const batch_offsets o = offsets_of(p, t);
    tc__gemm_epi epi = p->epi;
    if (epi.bias_m) epi.bias_m += o.bias_m;
    if (epi.bias_n) epi.bias_n += o.bias_n;
    if (epi.res) epi.res += o.res;
    const bool pack_here = packs_b_at_run(p);
    const size_t key = t * jb->nblocks + j_begin / jb->b.nc;
    tc__gemm_tile tile = {0};
    tile.ldc = p->ldc;
    for (size_t k0 = 0;;) {
        const size_t kcur = min_sz(kc, K - k0);
        const bool last = k0 + kcur >= K;
        if (pack_here && !(last && k0 == 0 && *packed_key == key)) {
            if (p->pack_b != NULL)
                p->pack_b(p->pack_b_ctx, t, k0, kcur, j_begin, j_end - j_begin, nr, buf);
            else
                tc__gemm_pack_b_f32(kcur, j_end - j_begin, nr, p->b + o.b + k0 * p->rs_b + j_begin * p->cs_b, p->rs_b,
                                    p->cs_b, buf);
            *packed_key = last && k0 == 0 ? key : SIZE_MAX;
        }
        tile.kc = kcur;
        tile.load_c = k0 > 0;
        tile.epi = last ? &epi : NULL;
        for (size_t jr = j_begin; jr < j_end; jr += nr) {
            const size_t w = min_sz(nr, j_end - jr);
            if (pack_here)
                tile.b = buf + (jr - j_begin) * kcur;
            else
                tile.b = p->b + o.b + jr * K + k0 * w;
            tile.rs_b = w;
            tile.nr = w;
            tile.j0 = jr;
            /* A packed B streams from memory: the next micro-panel is fetched while this one's row tiles run. With
             * one row tile (M <= mr: a classifier's GEMV) that would be the whole panel in one burst before the
             * only call, which measured slower than the hardware's own streaming (MobileNetV2's 1280x1000 Gemm:
             * 0.39 -> 0.28 ms in the model), so such blocks prefetch nothing. */
            prefetch_plan pf = {0};
            if (!pack_here && i_end - i_begin > mr)
                pf = next_panel(p->b + o.b, K, nr, j_begin, j_end, jr, k0, kcur, kc, i_end - i_begin, mr);
            size_t line = 0;
            for (size_t ir = i_begin; ir < i_end; ir += mr) {
                for (size_t e = min_sz(line + pf.per_tile, pf.lines); line < e; line++)
                    __builtin_prefetch(pf.base + min_sz(line * 16, pf.last), 0, 3);
                const size_t h = min_sz(mr, i_end - ir);
                if (p->a_packed) {
                    tile.a = p->a + o.a + ir * K + k0 * min_sz(mr, p->m - ir);
                    tile.rs_a = 1;
                    tile.cs_a = min_sz(mr, p->m - ir);
                } else {
                    tile.a = p->a + o.a + ir * p->rs_a + k0 * p->cs_a;
                    tile.rs_a = p->rs_a;
                    tile.cs_a = p->cs_a;
                }
                tile.mr = h;
                tile.i0 = ir;
                tile.c = p->c + o.c + ir * p->ldc + jr;
                jb->cfg->ukernel(&tile);
            }
        }
        k0 += kcur;
        if (last) break;
    }
}

/* Block `it` (batch-major, then N blocks, then M blocks: consecutive items share their B tile) with buffer s. */
static void run_item(const job *jb, size_t it, size_t s, size_t *packed_key) {
    const size_t per_batch = jb->mblocks * jb->nblocks;
    const size_t t = it / per_batch, r = it % per_batch, jbk = r / jb->mblocks, ibk = r % jb->mblocks;
    const size_t i0 = ibk * jb->b.mc, j0 = jbk * jb->b.nc;
    float *buf = jb->bufs ? jb->bufs + s * jb->buf_stride : NULL;
    run_block(jb, t, i0, min_sz(jb->p->m, i0 + jb->b.mc), j0, min_sz(jb->p->n, j0 + jb->b.nc), buf, packed_key);
}

/* One item per block: a thread that is descheduled (a busy machine) holds up only the block it runs, the
 * pool hands the rest to the others. Each thread has its own buffer and key. */
static void run_item_on(void *ctx, size_t thread, size_t it) {
    const job *jb = ctx;
    run_item(jb, it, thread, &jb->keys[thread]);
}

/* A contiguous range of blocks per slot (when the scratch holds fewer buffers than there are threads). */
static void run_slot(void *ctx, size_t s) {
    const job *jb = ctx;
    size_t packed_key = SIZE_MAX;
    for (size_t it = s * jb->items / jb->slots, end = (s + 1) * jb->items / jb->slots; it < end; it++)
        run_item(jb, it, s, &packed_key);
}

tc_status tc__gemm_f32_run(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg, const tc__kernel_ctx *ctx) {
    const size_t batch = batch_count(p);
    if (batch == 0 || p->m == 0 || p->n == 0) return TC_STATUS_OK;
    tc__pool_t pool = (tc__pool_t)ctx->exec;
    const size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    job jb = {.p = p, .cfg = cfg, .b = cache_blocks(p, cfg)};
    const size_t per_slot_max = slot_floats(p, cfg);

    /* As many slots as threads, or as fit in the scratch. */
    size_t slots = threads ? threads : 1;
    void *mem = NULL;
    if (per_slot_max > 0) {
        for (; slots >= 1; slots--) {
            if ((mem = tc__kernel_alloc(ctx, slots * per_slot_max * sizeof(float))) != NULL) break;
        }
        if (mem == NULL)
            return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "GEMM needs %zu bytes of scratch for a B tile",
                            per_slot_max * sizeof(float));
    }
    split_for_threads(p, cfg, batch, slots, &jb.b);
    while (per_slot_max > 0 && jb.b.kc * min_sz(jb.b.nc, p->n) > per_slot_max && jb.b.nc > cfg->nr)
        jb.b.nc -= cfg->nr; /* never: the bound holds by construction */
    jb.mblocks = (p->m + jb.b.mc - 1) / jb.b.mc;
    jb.nblocks = (p->n + jb.b.nc - 1) / jb.b.nc;
    jb.items = batch * jb.mblocks * jb.nblocks;
    jb.slots = slots < jb.items ? slots : jb.items;
    jb.bufs = mem;
    jb.buf_stride = per_slot_max;
    size_t keys[GEMM_KEYED_THREADS];
    if (jb.slots <= 1 || pool == NULL) {
        jb.slots = 1;
        run_slot(&jb, 0);
    } else if (slots == threads && threads <= GEMM_KEYED_THREADS) {
        for (size_t t = 0; t < threads; t++) keys[t] = SIZE_MAX;
        jb.keys = keys;
        tc__pool_parallelize_1d_with_thread(pool, run_item_on, &jb, jb.items, 0);
    } else {
        tc__pool_parallelize_1d(pool, run_slot, &jb, jb.slots, 0);
    }
    tc__kernel_free(ctx, mem);
    return TC_STATUS_OK;
}
