/* The scorers' loops over the banks, compiled in C when the package is installed.
 *
 * The same loops as jitted.py, with the same float arithmetic in the same order (float32 where
 * numpy's float32 is, float64 where it is; no contraction into fused multiply-adds), so every
 * score is the same to the bit. numba's compiler is LLVM, about 130 MB in every process that
 * imports it; this module is about 140 KB. Arrays come in through the buffer protocol and are
 * checked for their type, shape and every index they hold: a wrong call raises, it never reads or
 * writes outside an array.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum { F32, F64, I16, INTP } Kind;
static const char *KIND_NAMES[] = {"float32", "float64", "int16", "intp"};

#define MAX_ARGS 12

/* The buffers a call holds, released together on every way out. */
typedef struct {
    Py_buffer views[MAX_ARGS];
    int held;
} Held;

static void release(Held *h) {
    for (int i = 0; i < h->held; i++) PyBuffer_Release(&h->views[i]);
    h->held = 0;
}

static int format_is(const Py_buffer *v, Kind kind) {
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    switch (kind) {
    case F32: return v->itemsize == 4 && strcmp(f, "f") == 0;
    case F64: return v->itemsize == 8 && strcmp(f, "d") == 0;
    case I16: return v->itemsize == 2 && strcmp(f, "h") == 0;
    case INTP:
        return v->itemsize == (Py_ssize_t)sizeof(Py_ssize_t) &&
               (strcmp(f, "l") == 0 || strcmp(f, "q") == 0 || strcmp(f, "n") == 0);
    }
    return 0;
}

/* `obj` as a C-contiguous array of `kind` with `ndim` dimensions: its data in `*data`, its shape in
 * `shape`. Returns 0, or -1 with a TypeError naming the argument. */
static int take(Held *h, PyObject *obj, Kind kind, int ndim, int writable, const char *name, void **data,
                Py_ssize_t *shape) {
    Py_buffer *v = &h->views[h->held];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, v, flags) < 0) return -1;
    h->held++;
    if (v->ndim != ndim || !format_is(v, kind)) {
        PyErr_Format(PyExc_TypeError, "%s must be a %d-dimensional %s array", name, ndim, KIND_NAMES[kind]);
        return -1;
    }
    *data = v->buf;
    for (int d = 0; d < ndim; d++) shape[d] = v->shape[d];
    return 0;
}

static int out_of_range(const char *what) {
    PyErr_Format(PyExc_IndexError, "%s is out of range", what);
    return -1;
}

static int check_args(Py_ssize_t nargs, Py_ssize_t expected, const char *function) {
    if (nargs == expected) return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", function, expected, nargs);
    return -1;
}

/* The column sums are converted and added sixteen or eight sentences at a time where the processor
 * can (the same additions in the same order, so the same sums); elsewhere four. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
#define WIDE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define WIDE
#endif
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

#define MAX(a, b) ((b) > (a) ? (b) : (a))
#define MIN(a, b) ((b) < (a) ? (b) : (a))

/* ---- the word-vector model ---------------------------------------------------------------- */

typedef struct {
    const Py_ssize_t *ids;
    Py_ssize_t count;
    const float *table;
    Py_ssize_t table_rows, width;
    const Py_ssize_t *row_of;
    Py_ssize_t tokens;
    const int16_t *slab;
    Py_ssize_t slab_rows, sentences;
    const float *scale;
    Py_ssize_t scales;
} Columns;

static int take_columns(Held *h, PyObject *const *args, Columns *c) {
    void *p[5];
    Py_ssize_t s[2];
    if (take(h, args[0], INTP, 1, 0, "ids", &p[0], s) < 0) return -1;
    c->ids = p[0], c->count = s[0];
    if (take(h, args[1], F32, 2, 0, "table", &p[1], s) < 0) return -1;
    c->table = p[1], c->table_rows = s[0], c->width = s[1];
    if (take(h, args[2], INTP, 1, 0, "row_of", &p[2], s) < 0) return -1;
    c->row_of = p[2], c->tokens = s[0];
    if (take(h, args[3], I16, 2, 0, "slab", &p[3], s) < 0) return -1;
    c->slab = p[3], c->slab_rows = s[0], c->sentences = s[1];
    if (take(h, args[4], F32, 1, 0, "scale", &p[4], s) < 0) return -1;
    c->scale = p[4], c->scales = s[0];
    if (c->scales < c->slab_rows) return out_of_range("a row of slab without its scale");
    for (Py_ssize_t n = 0; n < c->count; n++) {
        Py_ssize_t token = c->ids[n];
        if (token < 0 || token >= c->table_rows || token >= c->tokens) return out_of_range("an id");
        Py_ssize_t row = c->row_of[token];
        if (row < 0 || row >= c->slab_rows) return out_of_range("an id's kept column");
    }
    return 0;
}

/* `out` = the sum of the kept columns of `ids` (slab rows times their scale), four rows to a pass
 * over `out` and added in the same order as one at a time; returns the length of the ids' vectors'
 * sum (0 for none: `out` is then zeros). */
WIDE static float token_sum(const Columns *c, float *restrict out) {
    const Py_ssize_t width = c->width, length = c->sentences;
    float stack[512];
    float *vector = width <= 512 ? stack : malloc((size_t)width * sizeof(float));
    if (vector == NULL) return -1.0f;
    memset(vector, 0, (size_t)width * sizeof(float));
    for (Py_ssize_t n = 0; n < c->count; n++) {
        const float *row = c->table + c->ids[n] * width;
        for (Py_ssize_t d = 0; d < width; d++) vector[d] += row[d];
    }
    double square = 0.0;
    for (Py_ssize_t d = 0; d < width; d++) square += (double)vector[d] * (double)vector[d];
    if (vector != stack) free(vector);
    float norm = (float)sqrt(square);
    if (c->count == 0 || norm == 0.0f) {
        memset(out, 0, (size_t)length * sizeof(float));
        return 0.0f;
    }
    const Py_ssize_t *ids = c->ids, *row_of = c->row_of;
    const int16_t *first = c->slab + row_of[ids[0]] * length;
    const float factor = c->scale[row_of[ids[0]]];
    for (Py_ssize_t j = 0; j < length; j++) out[j] = factor * (float)first[j];
    Py_ssize_t t = 1;
    for (; t + 4 <= c->count; t += 4) {
        Py_ssize_t ra = row_of[ids[t]], rb = row_of[ids[t + 1]], rc = row_of[ids[t + 2]], rd = row_of[ids[t + 3]];
        const int16_t *restrict a = c->slab + ra * length, *restrict b = c->slab + rb * length;
        const int16_t *restrict cc = c->slab + rc * length, *restrict d = c->slab + rd * length;
        const float fa = c->scale[ra], fb = c->scale[rb], fc = c->scale[rc], fd = c->scale[rd];
        for (Py_ssize_t j = 0; j < length; j++) {
            float value = (out[j] + fa * (float)a[j]) + fb * (float)b[j];
            out[j] = (value + fc * (float)cc[j]) + fd * (float)d[j];
        }
    }
    for (; t < c->count; t++) {
        Py_ssize_t r = row_of[ids[t]];
        const int16_t *row = c->slab + r * length;
        const float f = c->scale[r];
        for (Py_ssize_t j = 0; j < length; j++) out[j] += f * (float)row[j];
    }
    return norm;
}

typedef struct {
    const Py_ssize_t *starts, *sizes;
    Py_ssize_t labels;
} Runs;

static int take_runs(Held *h, PyObject *starts, PyObject *sizes, Py_ssize_t length, Runs *r) {
    void *p, *q;
    Py_ssize_t s[1], t[1];
    if (take(h, starts, INTP, 1, 0, "starts", &p, s) < 0 || take(h, sizes, INTP, 1, 0, "sizes", &q, t) < 0) return -1;
    if (s[0] != t[0]) return out_of_range("a label without its size");
    r->starts = p, r->sizes = q, r->labels = s[0];
    for (Py_ssize_t n = 0; n < r->labels; n++)
        if (r->starts[n] < 0 || r->sizes[n] < 1 || r->starts[n] + r->sizes[n] > length) return out_of_range("a run");
    return 0;
}

/* Adds to `total` a `parts`th of each run's best of `sims` divided by `norm`, or with `two` of the
 * mean of its best two. Two independent best-and-second pairs (odd and even positions) are merged
 * at the end; a tie with the best is its second, and a run of one counts its sentence twice. */
static ALWAYS_INLINE void runs_best(const float *sims, float norm, const Runs *r, int two, double parts,
                                    double *total) {
    const float lowest = -INFINITY;
    for (Py_ssize_t label = 0; label < r->labels; label++) {
        Py_ssize_t start = r->starts[label], end = start + r->sizes[label];
        float best = sims[start] / norm, second = lowest, best2 = lowest, second2 = lowest;
        Py_ssize_t j = start + 1;
        for (; j + 1 < end; j += 2) {
            float value = sims[j] / norm, value2 = sims[j + 1] / norm;
            second = MAX(second, MIN(best, value));
            second2 = MAX(second2, MIN(best2, value2));
            best = MAX(best, value);
            best2 = MAX(best2, value2);
        }
        if (j < end) {
            float value = sims[j] / norm;
            second = MAX(second, MIN(best, value));
            best = MAX(best, value);
        }
        second = MAX(MIN(best, best2), MAX(second, second2));
        best = MAX(best, best2);
        float score = (!two || r->sizes[label] == 1) ? best : (second + best) / 2.0f;
        total[label] += (double)score / parts;
    }
}

WIDE static void best_of_runs(const float *sims, float norm, const Runs *r, int two, double parts, double *total) {
    runs_best(sims, norm, r, two, parts, total);
}

/* The same for similarities divided already (x / 1 is x: the compiler leaves the divisions out). */
WIDE static void best_of_divided(const float *sims, const Runs *r, int two, double parts, double *total) {
    runs_best(sims, 1.0f, r, two, parts, total);
}

/* `values` divided by `norm`, many at a time (each the same quotient as divided one by one). */
WIDE static void divide(float *restrict values, Py_ssize_t n, float norm) {
    for (Py_ssize_t j = 0; j < n; j++) values[j] = values[j] / norm;
}

static int take_parts(PyObject *obj, double *parts) {
    long value = PyLong_AsLong(obj);
    if (value == -1 && PyErr_Occurred()) return -1;
    if (value < 1) {
        PyErr_SetString(PyExc_ValueError, "parts must be at least 1");
        return -1;
    }
    *parts = (double)value;
    return 0;
}

/* kept_columns(ids, row_of, stamp, clock, missing) -> int */
static PyObject *kept_columns(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    void *p[4];
    Py_ssize_t ni[1], nr[1], ns[1], nm[1];
    if (check_args(nargs, 5, "kept_columns") < 0) return NULL;
    PyObject *result = NULL;
    if (take(&h, args[0], INTP, 1, 0, "ids", &p[0], ni) < 0 || take(&h, args[1], INTP, 1, 0, "row_of", &p[1], nr) < 0 ||
        take(&h, args[2], INTP, 1, 1, "stamp", &p[2], ns) < 0 || take(&h, args[4], INTP, 1, 1, "missing", &p[3], nm) < 0)
        goto done;
    Py_ssize_t clock = PyLong_AsSsize_t(args[3]);
    if (clock == -1 && PyErr_Occurred()) goto done;
    const Py_ssize_t *ids = p[0], *row_of = p[1];
    Py_ssize_t *stamp = p[2], *missing = p[3], count = 0;
    for (Py_ssize_t n = 0; n < ni[0]; n++) {
        Py_ssize_t token = ids[n];
        if (token < 0 || token >= nr[0]) {
            out_of_range("an id");
            goto done;
        }
        Py_ssize_t row = row_of[token];
        if (row >= 0) {
            if (row >= ns[0]) {
                out_of_range("a kept column");
                goto done;
            }
            stamp[row] = clock;
            continue;
        }
        int seen = 0;
        for (Py_ssize_t m = 0; m < count; m++) seen |= missing[m] == token;
        if (!seen) {
            if (count >= nm[0]) {
                out_of_range("a missing id");
                goto done;
            }
            missing[count++] = token;
        }
    }
    result = PyLong_FromSsize_t(count);
done:
    release(&h);
    return result;
}

/* token_similarities(ids, table, row_of, slab, scale, out) -> out: the cosine similarity of the
 * text of `ids` to each bank sentence. */
static PyObject *token_similarities(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    Columns c;
    void *p;
    Py_ssize_t n[1];
    if (check_args(nargs, 6, "token_similarities") < 0) return NULL;
    PyObject *result = NULL;
    if (take_columns(&h, args, &c) < 0 || take(&h, args[5], F32, 1, 1, "out", &p, n) < 0) goto done;
    if (n[0] != c.sentences) {
        out_of_range("out, for the slab's sentences,");
        goto done;
    }
    float *out = p, norm = token_sum(&c, out);
    if (norm < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (norm != 0.0f) divide(out, n[0], norm);
    result = Py_NewRef(args[5]);
done:
    release(&h);
    return result;
}

/* token_scores(ids, table, row_of, slab, scale, starts, sizes, two, sims, parts, total) -> None:
 * best_of_runs of token_similarities, in one call. */
static PyObject *token_scores(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    Columns c;
    Runs r;
    void *ps, *pt;
    Py_ssize_t ns[1], nt[1];
    double parts;
    if (check_args(nargs, 11, "token_scores") < 0) return NULL;
    PyObject *result = NULL;
    int two = PyObject_IsTrue(args[7]);
    if (two < 0 || take_columns(&h, args, &c) < 0 || take(&h, args[8], F32, 1, 1, "sims", &ps, ns) < 0 ||
        take(&h, args[10], F64, 1, 1, "total", &pt, nt) < 0 || take_parts(args[9], &parts) < 0 ||
        take_runs(&h, args[5], args[6], ns[0], &r) < 0)
        goto done;
    if (ns[0] != c.sentences || nt[0] != r.labels) {
        out_of_range("sims or total");
        goto done;
    }
    float norm = token_sum(&c, ps);
    if (norm < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (norm != 0.0f) divide(ps, ns[0], norm);
    best_of_divided(ps, &r, two, parts, pt);
    result = Py_NewRef(Py_None);
done:
    release(&h);
    return result;
}

/* best_of_runs(sims, norm, starts, sizes, two, parts, total) -> None */
static PyObject *best_of_runs_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    Runs r;
    void *ps, *pt;
    Py_ssize_t ns[1], nt[1];
    double parts;
    if (check_args(nargs, 7, "best_of_runs") < 0) return NULL;
    PyObject *result = NULL;
    double norm = PyFloat_AsDouble(args[1]);
    int two = PyObject_IsTrue(args[4]);
    if ((norm == -1.0 && PyErr_Occurred()) || two < 0 || take(&h, args[0], F32, 1, 0, "sims", &ps, ns) < 0 ||
        take(&h, args[6], F64, 1, 1, "total", &pt, nt) < 0 || take_parts(args[5], &parts) < 0 ||
        take_runs(&h, args[2], args[3], ns[0], &r) < 0)
        goto done;
    if (nt[0] != r.labels) {
        out_of_range("total");
        goto done;
    }
    if ((float)norm == 1.0f)
        best_of_divided(ps, &r, two, parts, pt);
    else
        best_of_runs(ps, (float)norm, &r, two, parts, pt);
    result = Py_NewRef(Py_None);
done:
    release(&h);
    return result;
}

/* least_used(stamp, count, rows) -> rows: the `count` positions of the smallest stamps. */
static PyObject *least_used(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    void *ps, *pr;
    Py_ssize_t ns[1], nr[1];
    if (check_args(nargs, 3, "least_used") < 0) return NULL;
    PyObject *result = NULL;
    char *taken = NULL;
    Py_ssize_t count = PyLong_AsSsize_t(args[1]);
    if ((count == -1 && PyErr_Occurred()) || take(&h, args[0], INTP, 1, 0, "stamp", &ps, ns) < 0 ||
        take(&h, args[2], INTP, 1, 1, "rows", &pr, nr) < 0)
        goto done;
    if (count < 0 || count > nr[0] || count > ns[0]) {
        out_of_range("count");
        goto done;
    }
    taken = calloc((size_t)ns[0] + 1, 1);
    if (taken == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const Py_ssize_t *stamp = ps;
    Py_ssize_t *rows = pr;
    for (Py_ssize_t n = 0; n < count; n++) {
        Py_ssize_t best = -1;
        for (Py_ssize_t r = 0; r < ns[0]; r++)
            if (!taken[r] && (best < 0 || stamp[r] < stamp[best])) best = r;
        taken[best] = 1;
        rows[n] = best;
    }
    result = Py_NewRef(args[2]);
done:
    free(taken);
    release(&h);
    return result;
}

/* store_column(column, slab, scale, row) -> None: `column` kept in slab's `row` as 16-bit integers
 * times scale[row]. */
static PyObject *store_column(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    void *pc, *pl, *pf;
    Py_ssize_t nc[1], nl[2], nf[1];
    if (check_args(nargs, 4, "store_column") < 0) return NULL;
    PyObject *result = NULL;
    Py_ssize_t row = PyLong_AsSsize_t(args[3]);
    if ((row == -1 && PyErr_Occurred()) || take(&h, args[0], F32, 1, 0, "column", &pc, nc) < 0 ||
        take(&h, args[1], I16, 2, 1, "slab", &pl, nl) < 0 || take(&h, args[2], F32, 1, 1, "scale", &pf, nf) < 0)
        goto done;
    if (row < 0 || row >= nl[0] || row >= nf[0] || nc[0] != nl[1]) {
        out_of_range("row");
        goto done;
    }
    const float *column = pc;
    float top = 0.0f;
    for (Py_ssize_t j = 0; j < nc[0]; j++) top = MAX(top, fabsf(column[j]));
    const float factor = top > 0.0f ? top / 32767.0f : 1.0f;
    ((float *)pf)[row] = factor;
    int16_t *target = (int16_t *)pl + row * nl[1];
    for (Py_ssize_t j = 0; j < nc[0]; j++) target[j] = (int16_t)rintf(column[j] / factor);
    result = Py_NewRef(Py_None);
done:
    release(&h);
    return result;
}

/* ---- the lexical model -------------------------------------------------------------------- */

/* The distinct `ids` in `distinct`, in the order they first occur, and how often each occurs in
 * `counts`; returns how many are distinct. */
static Py_ssize_t count_ids(const Py_ssize_t *ids, Py_ssize_t n, Py_ssize_t *distinct, Py_ssize_t *counts) {
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t at = found;
        for (Py_ssize_t m = 0; m < found; m++)
            if (distinct[m] == ids[i]) {
                at = m;
                break;
            }
        if (at == found) {
            distinct[found] = ids[i];
            counts[found++] = 0;
        }
        counts[at] += 1;
    }
    return found;
}

/* TF-IDF values as scikit-learn's sublinear TfidfVectorizer gives them: (1 + log count) times the
 * feature's idf, the whole scaled to unit length. */
static void tfidf(const float *idf, const Py_ssize_t *features, const Py_ssize_t *counts, Py_ssize_t n, float *values) {
    float square = 0.0f;
    for (Py_ssize_t i = 0; i < n; i++) {
        float value = idf[features[i]];
        if (counts[i] > 1) value = (float)(1.0 + log((double)counts[i])) * value;
        values[i] = value;
        square += value * value;
    }
    const float norm = (float)sqrt((double)square);
    if (norm != 0.0f)
        for (Py_ssize_t i = 0; i < n; i++) values[i] = values[i] / norm;
}

static int check_features(const Py_ssize_t *features, Py_ssize_t n, Py_ssize_t limit) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (features[i] < 0 || features[i] >= limit) return out_of_range("a feature");
    return 0;
}

/* counted(ids, distinct, counts) -> int */
static PyObject *counted(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    void *pi, *pd, *pc;
    Py_ssize_t ni[1], nd[1], nc[1];
    if (check_args(nargs, 3, "counted") < 0) return NULL;
    PyObject *result = NULL;
    if (take(&h, args[0], INTP, 1, 0, "ids", &pi, ni) < 0 || take(&h, args[1], INTP, 1, 1, "distinct", &pd, nd) < 0 ||
        take(&h, args[2], INTP, 1, 1, "counts", &pc, nc) < 0)
        goto done;
    if (nd[0] < ni[0] || nc[0] < ni[0]) {
        out_of_range("distinct or counts, shorter than ids,");
        goto done;
    }
    result = PyLong_FromSsize_t(count_ids(pi, ni[0], pd, pc));
done:
    release(&h);
    return result;
}

/* tfidf_values(idf, features, counts, out) -> out */
static PyObject *tfidf_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    void *pi, *pf, *pc, *po;
    Py_ssize_t ni[1], nf[1], nc[1], no[1];
    if (check_args(nargs, 4, "tfidf_values") < 0) return NULL;
    PyObject *result = NULL;
    if (take(&h, args[0], F32, 1, 0, "idf", &pi, ni) < 0 || take(&h, args[1], INTP, 1, 0, "features", &pf, nf) < 0 ||
        take(&h, args[2], INTP, 1, 0, "counts", &pc, nc) < 0 || take(&h, args[3], F32, 1, 1, "out", &po, no) < 0)
        goto done;
    if (nc[0] != nf[0] || no[0] != nf[0]) {
        out_of_range("counts or out, for the features,");
        goto done;
    }
    if (check_features(pf, nf[0], ni[0]) < 0) goto done;
    tfidf(pi, pf, pc, nf[0], po);
    result = Py_NewRef(args[3]);
done:
    release(&h);
    return result;
}

/* tfidf_logistic_scores(weights, bias, idf, ids, parts, total) -> None: adds to `total` a `parts`th
 * of the one-versus-rest logistic outputs of the TF-IDF values of the features `ids`, normalized to
 * sum to one as scikit-learn's predict_proba does. */
static PyObject *tfidf_logistic_scores(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Held h = {.held = 0};
    void *pw, *pb, *pi, *pd, *pt;
    Py_ssize_t nw[2], nb[1], ni[1], nd[1], nt[1];
    double parts;
    if (check_args(nargs, 6, "tfidf_logistic_scores") < 0) return NULL;
    PyObject *result = NULL;
    Py_ssize_t *scratch = NULL;
    float *floats = NULL;
    if (take(&h, args[0], F32, 2, 0, "weights", &pw, nw) < 0 || take(&h, args[1], F32, 1, 0, "bias", &pb, nb) < 0 ||
        take(&h, args[2], F32, 1, 0, "idf", &pi, ni) < 0 || take(&h, args[3], INTP, 1, 0, "ids", &pd, nd) < 0 ||
        take_parts(args[4], &parts) < 0 || take(&h, args[5], F64, 1, 1, "total", &pt, nt) < 0)
        goto done;
    const Py_ssize_t labels = nw[1];
    if (nb[0] != labels || nt[0] != labels || ni[0] > nw[0]) {
        out_of_range("bias, total or idf, for the weights,");
        goto done;
    }
    if (check_features(pd, nd[0], ni[0]) < 0) goto done;
    scratch = malloc(2 * (size_t)(nd[0] + 1) * sizeof(Py_ssize_t));
    floats = malloc(((size_t)nd[0] + (size_t)labels + 1) * sizeof(float));
    if (scratch == NULL || floats == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t *features = scratch, *counts = scratch + nd[0] + 1;
    float *values = floats, *out = floats + nd[0];
    const Py_ssize_t found = count_ids(pd, nd[0], features, counts);
    tfidf(pi, features, counts, found, values);
    const float *weights = pw, *bias = pb;
    for (Py_ssize_t label = 0; label < labels; label++) out[label] = bias[label];
    for (Py_ssize_t n = 0; n < found; n++) {
        const float *row = weights + features[n] * labels;
        const float value = values[n];
        for (Py_ssize_t label = 0; label < labels; label++) out[label] += value * row[label];
    }
    float sum = 0.0f;
    for (Py_ssize_t label = 0; label < labels; label++) {
        out[label] = 1.0f / (1.0f + expf(-out[label]));
        sum += out[label];
    }
    if (sum != 0.0f)
        for (Py_ssize_t label = 0; label < labels; label++) out[label] /= sum;
    double *total = pt;
    for (Py_ssize_t label = 0; label < labels; label++) total[label] += (double)out[label] / parts;
    result = Py_NewRef(Py_None);
done:
    free(scratch);
    free(floats);
    release(&h);
    return result;
}

static PyMethodDef METHODS[] = {
    {"kept_columns", (PyCFunction)(void (*)(void))kept_columns, METH_FASTCALL, NULL},
    {"token_similarities", (PyCFunction)(void (*)(void))token_similarities, METH_FASTCALL, NULL},
    {"token_scores", (PyCFunction)(void (*)(void))token_scores, METH_FASTCALL, NULL},
    {"best_of_runs", (PyCFunction)(void (*)(void))best_of_runs_py, METH_FASTCALL, NULL},
    {"least_used", (PyCFunction)(void (*)(void))least_used, METH_FASTCALL, NULL},
    {"store_column", (PyCFunction)(void (*)(void))store_column, METH_FASTCALL, NULL},
    {"counted", (PyCFunction)(void (*)(void))counted, METH_FASTCALL, NULL},
    {"tfidf_values", (PyCFunction)(void (*)(void))tfidf_values, METH_FASTCALL, NULL},
    {"tfidf_logistic_scores", (PyCFunction)(void (*)(void))tfidf_logistic_scores, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT,
    .m_name = "native",
    .m_doc = "The scorers' loops over the banks, compiled in C (see jitted.py).",
    .m_size = -1,
    .m_methods = METHODS,
};

PyMODINIT_FUNC PyInit_native(void) { return PyModule_Create(&MODULE); }
