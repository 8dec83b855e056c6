/* repo.c - the model repository of `tailcut serve` (see repo.h): finds the model folders, keeps one slot per model
 * (state, reason, metrics, live model), loads each model on its own at start, and carries out Triton's model control
 * (load, unload, index). Lock order: ctl (control operations, may be held for a whole build) before mu (slots, held
 * only briefly); a model's queue lock is never taken with mu held. */
#include "repo.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_load.h"

int srv_valid_name(const char *name) {
    if (!name || !*name || strlen(name) >= SRV_NAME_MAX) return 0;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return 0;
    }
    return 1;
}

static int has_config(const char *dir, const char *name) {
    char p[4400];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s/config.json", dir, name);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *state_name(srv_state_t s) {
    switch (s) {
    case SRV_READY: return "READY";
    case SRV_LOADING: return "LOADING";
    case SRV_UNLOADING: return "UNLOADING";
    default: return "UNAVAILABLE";
    }
}

/* Caller holds mu. */
static srv_slot *find_slot(const srv_repo *repo, const char *name) {
    for (int i = 0; i < repo->n; i++)
        if (strcmp(repo->slots[i]->name, name) == 0) return repo->slots[i];
    return NULL;
}

/* Adds a slot (UNAVAILABLE, reason why). Caller holds mu. NULL on out of memory. */
static srv_slot *add_slot(srv_repo *repo, const char *name, const char *why) {
    srv_slot *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (srv_metrics_init(&s->metrics)) {
        free(s);
        return NULL;
    }
    srv_slot **ns = realloc(repo->slots, (size_t)(repo->n + 1) * sizeof *ns);
    if (!ns) {
        srv_metrics_destroy(&s->metrics);
        free(s);
        return NULL;
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    s->state = SRV_UNAVAILABLE;
    snprintf(s->reason, sizeof s->reason, "%s", why);
    repo->slots = ns;
    repo->slots[repo->n++] = s;
    return s;
}

static int cmp_slot(const void *a, const void *b) {
    return strcmp((*(srv_slot *const *)a)->name, (*(srv_slot *const *)b)->name);
}

/* Reads the folder and adds a slot for every model folder not seen yet (reason why). Returns -1 when the folder
 * cannot be read, else the number of slots added. Caller holds ctl (not mu). */
static int scan(srv_repo *repo, const char *why) {
    DIR *d = opendir(repo->dir);
    if (!d) {
        fprintf(stderr, "tailcut serve: --model-repository %s: %s\n", repo->dir, strerror(errno));
        return -1;
    }
    int added = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!has_config(repo->dir, e->d_name)) continue;
        if (!srv_valid_name(e->d_name)) {
            /* No URL can name it: log and skip (printable bytes only, the name may hold anything). */
            char shown[64];
            size_t k = 0;
            for (const char *p = e->d_name; *p && k + 1 < sizeof shown; p++) shown[k++] = (*p >= 32 && *p < 127) ? *p : '?';
            shown[k] = '\0';
            fprintf(stderr, "tailcut serve: %s/%s: skipped: model names may only use [A-Za-z0-9_.-]\n", repo->dir, shown);
            continue;
        }
        pthread_mutex_lock(&repo->mu);
        if (!find_slot(repo, e->d_name)) {
            if (add_slot(repo, e->d_name, why)) added++;
        }
        pthread_mutex_unlock(&repo->mu);
    }
    closedir(d);
    pthread_mutex_lock(&repo->mu);
    if (repo->n > 1) qsort(repo->slots, (size_t)repo->n, sizeof *repo->slots, cmp_slot);
    pthread_mutex_unlock(&repo->mu);
    return added;
}

void srv_model_release(srv_model *m) {
    if (m && atomic_fetch_sub(&m->refs, 1) == 1) srv_model_free(m);
}

srv_model *srv_repo_acquire(srv_repo *repo, const char *name, bool *known, char *why, size_t n) {
    srv_model *m = NULL;
    *known = false;
    if (n) why[0] = '\0';
    pthread_mutex_lock(&repo->mu);
    srv_slot *s = find_slot(repo, name);
    if (s) {
        *known = true;
        m = s->model;
        if (m) atomic_fetch_add(&m->refs, 1);
        else if (n) snprintf(why, n, "%s%s%s", state_name(s->state), s->reason[0] ? ": " : "", s->reason);
    }
    pthread_mutex_unlock(&repo->mu);
    return m;
}

/* Loads the slot's model and makes it live. Caller holds ctl. Returns 0, or 400 / 503 with why set. */
static int load_slot(srv_repo *repo, srv_slot *s, char *why, size_t n) {
    pthread_mutex_lock(&repo->mu);
    if (!s->model) {
        s->state = SRV_LOADING;
        s->reason[0] = '\0';
    }
    s->wanted = true;
    const int models = repo->n; /* the repository's models share the cores (model_load.c) */
    pthread_mutex_unlock(&repo->mu);
    srv_model *m = srv_model_load(repo->dir, s->name, repo->engine_threads, models, &s->metrics);
    char reason[SRV_REASON_MAX];
    snprintf(reason, sizeof reason, "%s", m ? "" : srv_fail_reason());
    pthread_mutex_lock(&repo->mu);
    srv_model *old = NULL;
    int rc = 0;
    if (repo->closing) {
        old = m; /* too late: the server is stopping */
        snprintf(why, n, "the server is shutting down");
        rc = 503;
        if (!s->model) {
            s->state = SRV_UNAVAILABLE;
            snprintf(s->reason, sizeof s->reason, "the server is shutting down");
        }
    } else if (m) {
        old = s->model;
        s->model = m;
        s->state = SRV_READY;
        s->reason[0] = '\0';
    } else {
        snprintf(why, n, "%s", reason);
        rc = 400;
        if (!s->model) {
            s->state = SRV_UNAVAILABLE;
            snprintf(s->reason, sizeof s->reason, "%s", reason);
        }
    }
    const bool still_live = s->model != NULL;
    pthread_mutex_unlock(&repo->mu);
    if (rc == 400)
        fprintf(stderr, "tailcut serve: model '%s' %s: %s\n", s->name,
                still_live ? "failed to reload (the loaded version stays)" : "is UNAVAILABLE", reason);
    if (old) {
        /* The replaced model (or the one loaded too late) finishes what it queued; requests still holding it keep it
         * alive until they are answered. */
        srv_model_stop(old);
        srv_model_release(old);
        if (rc == 0) fprintf(stderr, "tailcut serve: model '%s' reloaded\n", s->name);
    }
    return rc;
}

int srv_repo_open(srv_repo *repo, const char *dir, int engine_threads) {
    memset(repo, 0, sizeof *repo);
    if (strlen(dir) >= sizeof repo->dir) {
        fprintf(stderr, "tailcut serve: --model-repository: path too long\n");
        return 1;
    }
    snprintf(repo->dir, sizeof repo->dir, "%s", dir);
    repo->engine_threads = engine_threads;
    if (pthread_mutex_init(&repo->mu, NULL)) return 1;
    if (pthread_mutex_init(&repo->ctl, NULL)) {
        pthread_mutex_destroy(&repo->mu);
        return 1;
    }
    pthread_mutex_lock(&repo->ctl);
    int rc = scan(repo, "not loaded yet") < 0;
    for (int i = 0; !rc && i < repo->n; i++) {
        char why[8];
        load_slot(repo, repo->slots[i], why, sizeof why);
    }
    pthread_mutex_unlock(&repo->ctl);
    if (rc) {
        srv_repo_free(repo);
        return 1;
    }
    int ready = 0;
    for (int i = 0; i < repo->n; i++) ready += repo->slots[i]->state == SRV_READY;
    if (repo->n == 0)
        fprintf(stderr, "tailcut serve: %s: no model folders with a config.json (load one with POST "
                "/v2/repository/models/NAME/load once it is there)\n", dir);
    else if (ready < repo->n)
        fprintf(stderr, "tailcut serve: %d of %d models ready; the others are UNAVAILABLE (see above and POST "
                "/v2/repository/index)\n", ready, repo->n);
    return 0;
}

int srv_repo_load_model(srv_repo *repo, const char *name, char *why, size_t n) {
    if (!srv_valid_name(name)) {
        snprintf(why, n, "invalid model name: names use [A-Za-z0-9_.-]");
        return 400;
    }
    pthread_mutex_lock(&repo->ctl);
    pthread_mutex_lock(&repo->mu);
    srv_slot *s = find_slot(repo, name);
    pthread_mutex_unlock(&repo->mu);
    if (!s && has_config(repo->dir, name)) {
        scan(repo, "not loaded");
        pthread_mutex_lock(&repo->mu);
        s = find_slot(repo, name);
        pthread_mutex_unlock(&repo->mu);
    }
    int rc;
    if (!s) {
        snprintf(why, n, "failed to load '%s': no folder %s/%s with a config.json", name, repo->dir, name);
        rc = 400;
    } else {
        rc = load_slot(repo, s, why, n);
    }
    pthread_mutex_unlock(&repo->ctl);
    return rc;
}

int srv_repo_unload_model(srv_repo *repo, const char *name, char *why, size_t n) {
    pthread_mutex_lock(&repo->ctl);
    pthread_mutex_lock(&repo->mu);
    srv_slot *s = srv_valid_name(name) ? find_slot(repo, name) : NULL;
    srv_model *old = NULL;
    if (s) {
        old = s->model;
        s->model = NULL;
        s->wanted = false;
        s->state = old ? SRV_UNLOADING : SRV_UNAVAILABLE;
        snprintf(s->reason, sizeof s->reason, "unloaded");
    }
    pthread_mutex_unlock(&repo->mu);
    int rc = 0;
    if (!s) {
        snprintf(why, n, "failed to unload '%s': unknown model", srv_valid_name(name) ? name : "(invalid name)");
        rc = 400;
    } else if (old) {
        srv_model_stop(old); /* drains: the queued and running requests finish */
        srv_model_release(old);
        pthread_mutex_lock(&repo->mu);
        s->state = SRV_UNAVAILABLE;
        pthread_mutex_unlock(&repo->mu);
        fprintf(stderr, "tailcut serve: model '%s' unloaded\n", name);
    }
    pthread_mutex_unlock(&repo->ctl);
    return rc;
}

char *srv_repo_index_json(srv_repo *repo, bool ready_only) {
    /* Rescan unless a load or unload is under way (a build can take a while: list what is known meanwhile). */
    if (pthread_mutex_trylock(&repo->ctl) == 0) {
        scan(repo, "not loaded: found after start-up (POST /v2/repository/models/NAME/load)");
        pthread_mutex_unlock(&repo->ctl);
    }
    cJSON *arr = cJSON_CreateArray();
    if (!arr) return NULL;
    int bad = 0;
    pthread_mutex_lock(&repo->mu);
    for (int i = 0; i < repo->n && !bad; i++) {
        const srv_slot *s = repo->slots[i];
        if (ready_only && s->state != SRV_READY) continue;
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddStringToObject(o, "name", s->name) || !cJSON_AddStringToObject(o, "version", "1") ||
            !cJSON_AddStringToObject(o, "state", state_name(s->state)) ||
            !cJSON_AddStringToObject(o, "reason", s->reason))
            bad = 1;
        if (o) cJSON_AddItemToArray(arr, o);
    }
    pthread_mutex_unlock(&repo->mu);
    char *text = bad ? NULL : cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    return text;
}

bool srv_repo_ready(srv_repo *repo, bool strict) {
    bool all = true, any = false;
    pthread_mutex_lock(&repo->mu);
    for (int i = 0; i < repo->n; i++) {
        const srv_slot *s = repo->slots[i];
        if (s->state == SRV_READY) any = true;
        else if (s->wanted) all = false;
    }
    pthread_mutex_unlock(&repo->mu);
    return strict ? all : any;
}

void srv_repo_write_metrics(srv_repo *repo, FILE *f) {
    /* Slots live as long as the repository: copy the list, then write without holding mu (lookups go on). */
    pthread_mutex_lock(&repo->mu);
    const int n = repo->n;
    srv_slot **slots = malloc((size_t)(n > 0 ? n : 1) * sizeof *slots);
    if (slots && n > 0) memcpy(slots, repo->slots, (size_t)n * sizeof *slots);
    pthread_mutex_unlock(&repo->mu);
    if (!slots) return;
    for (int sec = 0; sec < srv_metrics_sections(); sec++) {
        srv_metrics_header(f, sec);
        for (int i = 0; i < n; i++) srv_metrics_write(&slots[i]->metrics, slots[i]->name, f, sec);
    }
    free(slots);
}

void srv_repo_stop(srv_repo *repo) {
    /* Stop the live models without taking them out (requests in flight still answer from them). */
    pthread_mutex_lock(&repo->mu);
    repo->closing = true;
    int n = repo->n;
    srv_model **live = calloc((size_t)(n > 0 ? n : 1), sizeof *live);
    for (int i = 0; i < n; i++) {
        srv_model *m = repo->slots[i]->model;
        if (m && live) atomic_fetch_add(&m->refs, 1);
        if (live) live[i] = m;
    }
    pthread_mutex_unlock(&repo->mu);
    if (!live) return; /* out of memory: srv_repo_free stops them */
    for (int i = 0; i < n; i++) {
        if (!live[i]) continue;
        srv_model_stop(live[i]);
        srv_model_release(live[i]);
    }
    free(live);
}

void srv_repo_free(srv_repo *repo) {
    srv_repo_stop(repo);
    for (int i = 0; i < repo->n; i++) {
        srv_slot *s = repo->slots[i];
        srv_model_release(s->model);
        srv_metrics_destroy(&s->metrics);
        free(s);
    }
    free(repo->slots);
    pthread_mutex_destroy(&repo->ctl);
    pthread_mutex_destroy(&repo->mu);
    memset(repo, 0, sizeof *repo);
}
