/* control.c - the model repository extension (see control.h). Load and unload run on the HTTP thread that received
 * them and answer when done, as Triton's do: a load builds the model when only model.onnx is there. */
#include "control.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "codec.h"

/* Parses an optional JSON object body into *root (NULL when the body is empty). Returns 0, or 400 with *json set. */
static int parse_body(const char *body, size_t len, cJSON **root, char **json) {
    *root = NULL;
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n')) i++;
    if (i == len) return 0;
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    if (!*root || !cJSON_IsObject(*root)) {
        cJSON_Delete(*root);
        *root = NULL;
        *json = srv_error_json("the request body must be empty or a JSON object");
        return 400;
    }
    while (end && end < body + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) end++;
    if (end != body + len) {
        cJSON_Delete(*root);
        *root = NULL;
        *json = srv_error_json("bytes after the JSON body");
        return 400;
    }
    return 0;
}

static int index_models(srv_repo *repo, const char *body, size_t len, char **json) {
    cJSON *root = NULL;
    int st = parse_body(body, len, &root, json);
    if (st) return st;
    const cJSON *ready = root ? cJSON_GetObjectItemCaseSensitive(root, "ready") : NULL;
    if (ready && !cJSON_IsBool(ready)) {
        cJSON_Delete(root);
        *json = srv_error_json("field \"ready\" must be true or false");
        return 400;
    }
    const bool ready_only = ready && cJSON_IsTrue(ready);
    cJSON_Delete(root);
    *json = srv_repo_index_json(repo, ready_only);
    return *json ? 200 : 500;
}

/* Triton's load may carry "parameters" with a config or files to use instead of the repository's: not supported, so
 * refused rather than ignored. Unload's "unload_dependents" (what tritonclient sends) must be a boolean; it has no
 * effect (no ensembles here). Other parameters are ignored. Returns 0 or 400 with *json set. */
static int check_parameters(const cJSON *root, int load, char **json) {
    const cJSON *params = root ? cJSON_GetObjectItemCaseSensitive(root, "parameters") : NULL;
    if (!params) return 0;
    if (!cJSON_IsObject(params)) {
        *json = srv_error_json("field \"parameters\" must be an object");
        return 400;
    }
    for (const cJSON *p = params->child; p; p = p->next) {
        if (load && p->string && (strcmp(p->string, "config") == 0 || strncmp(p->string, "file:", 5) == 0)) {
            *json = srv_error_json("load \"parameters\" with a config or files are not supported: change the files "
                                   "in the model repository, then load");
            return 400;
        }
        if (!load && p->string && strcmp(p->string, "unload_dependents") == 0 && !cJSON_IsBool(p)) {
            *json = srv_error_json("field \"parameters.unload_dependents\" must be true or false");
            return 400;
        }
    }
    return 0;
}

int srv_control(srv_repo *repo, const char *path, const char *body, size_t len, char **json) {
    static const char models[] = "/v2/repository/models/";
    if (strcmp(path, "/v2/repository/index") == 0) return index_models(repo, body, len, json);
    if (strncmp(path, models, sizeof models - 1) != 0) {
        *json = srv_error_json("not found");
        return 404;
    }
    const char *name = path + sizeof models - 1;
    const char *slash = strrchr(name, '/');
    const int load = slash && strcmp(slash, "/load") == 0, unload = slash && strcmp(slash, "/unload") == 0;
    char nm[SRV_NAME_MAX];
    const size_t n = slash ? (size_t)(slash - name) : 0;
    if ((!load && !unload) || n == 0 || n >= sizeof nm) {
        *json = srv_error_json("not found: use /v2/repository/models/NAME/load or /unload");
        return 404;
    }
    memcpy(nm, name, n);
    nm[n] = '\0';
    cJSON *root = NULL;
    int st = parse_body(body, len, &root, json);
    if (st) return st;
    st = check_parameters(root, load, json);
    cJSON_Delete(root);
    if (st) return st;
    char why[SRV_REASON_MAX + 64];
    st = load ? srv_repo_load_model(repo, nm, why, sizeof why) : srv_repo_unload_model(repo, nm, why, sizeof why);
    *json = st ? srv_error_json(why) : strdup("{}");
    return st ? st : 200;
}
