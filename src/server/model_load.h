/* model_load.h - loads one model folder of the repository into a running srv_model: config.json, the engine
 * (1/model.plan, or 1/model.onnx built and cached as the plan; a corrupt or stale cached plan is rebuilt from
 * model.onnx beside it), the instances and their batcher threads. */
#ifndef TC_SERVER_MODEL_LOAD_H
#define TC_SERVER_MODEL_LOAD_H

#include "repo.h"

/* Loads DIR/<name> and starts its instances; the model counts its requests in *metrics (kept, not owned). Returns the
 * model with one reference (the caller's), or NULL with the reason recorded (srv_fail_reason). Progress notes
 * (building, rebuilding a stale plan, ready) go to stderr. engine_threads > 0 overrides the per-instance threads; else
 * (and without tailcut.engine_threads in config.json) the CPU budget is split over the instances of `models` models. */
srv_model *srv_model_load(const char *dir, const char *name, int engine_threads, int models, srv_metrics *metrics);
/* Lets the model's instances finish its queued requests and joins them (idempotent). */
void srv_model_stop(srv_model *m);
/* Stops and frees the model: only once no request holds a reference (srv_model_release does it at zero). */
void srv_model_free(srv_model *m);

#endif
