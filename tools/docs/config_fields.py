"""config_fields.py - what each field of a model's config.json means (the text of the config reference page).
gen_config.py checks this table against the fields src/server/config.c reads: a field the parser reads that is not
described here, or described here and no longer read, fails `make docs`."""

# (type, default, meaning); the allowed range of integer fields comes from the parser itself.
FIELDS = {
    "max_batch_size": ("integer, **required**", "-",
                       "0: the model does not batch, and requests carry the model's full input shape. N >= 1: the "
                       "first dim of every input and output is the batch dim; `dims` below leave it out (as in "
                       "Triton) and a request may hold up to N rows."),
    "input": ("array of at most 64 objects", "the model's inputs",
              "The model's inputs as the server exposes them; each entry is checked against the model (name, "
              "type, dims), and a config at odds with the model leaves the model UNAVAILABLE with the reason."),
    "input[].name": ("string, **required** in an entry", "-", "The name of a graph input of the model."),
    "input[].data_type": ("string", "the model's", "Triton's type name: `TYPE_FP32`, `TYPE_FP64`, `TYPE_FP16`, "
                          "`TYPE_BF16`, `TYPE_INT8`, `TYPE_INT16`, `TYPE_INT32`, `TYPE_INT64`, `TYPE_UINT8`, "
                          "`TYPE_UINT16`, `TYPE_UINT32`, `TYPE_UINT64`, `TYPE_BOOL`."),
    "input[].dims": ("array of at most 8 integers, each >= 1 or -1", "the model's",
                     "The shape without the batch dim when `max_batch_size` > 0; -1 for a dim of any size. A number "
                     "or a decimal string (protobuf's JSON form of int64)."),
    "output": ("array of at most 64 objects", "the model's outputs", "The model's outputs, as `input`."),
    "output[].name": ("string, **required** in an entry", "-", "The name of a graph output of the model."),
    "output[].data_type": ("string", "the model's", "As `input[].data_type`."),
    "output[].dims": ("array of integers", "the model's", "As `input[].dims`."),
    "dynamic_batching": ("object", "absent: every request runs alone",
                         "Turns on the dynamic batcher: an instance gathers queued requests of the same shape into "
                         "one batch of up to `max_batch_size` rows (needs `max_batch_size` >= 1)."),
    "dynamic_batching.max_queue_delay_microseconds": ("integer", "0",
                                                      "How long the batcher may wait for more requests to fill a "
                                                      "batch, counted from the oldest queued request: the latency "
                                                      "it may add to a request in exchange for larger batches."),
    "dynamic_batching.preferred_batch_size": ("array of at most 16 integers in [1, max_batch_size]", "none",
                                              "Batch sizes the batcher prefers: it runs a batch as soon as it "
                                              "reaches one of them rather than waiting for the delay to pass."),
    "dynamic_batching.max_queue_size": ("integer", "0 (unbounded)",
                                        "Requests the model's queue holds; a request that finds it full gets 503. "
                                        "Also accepted inside `default_queue_policy`, where Triton keeps it."),
    "dynamic_batching.default_timeout_microseconds": ("integer", "0 (none)",
                                                      "How long a request may wait, from its arrival until an "
                                                      "instance takes it; when it expires the request gets 503. A "
                                                      "request may set its own with `\"parameters\": {\"timeout\": "
                                                      "us}`. Also accepted inside `default_queue_policy`."),
    "dynamic_batching.default_queue_policy": ("object", "-",
                                              "Triton's place for `max_queue_size` and "
                                              "`default_timeout_microseconds`; either place is read."),
    "dynamic_batching.priority_levels": ("integer", "0 (one level)",
                                         "Number of priority levels of the queue; level 1 is the highest. A "
                                         "request chooses one with `\"parameters\": {\"priority\": level}`."),
    "dynamic_batching.default_priority_level": ("integer in [0, priority_levels]", "the lowest level",
                                                "The level of a request that names none."),
    "instance_group": ("array of objects (or one object)", "one instance",
                       "Instances serving the model: each has its own context and thread; the counts of the groups "
                       "add up (at most 64 in all)."),
    "instance_group[].count": ("integer", "1", "Instances in this group."),
    "instance_group[].kind": ("string", "`KIND_AUTO`",
                              "`KIND_CPU` requires a CPU plan; `KIND_GPU` builds `model.onnx` with `--backend cuda` "
                              "and requires a CUDA plan; `KIND_AUTO` runs a plan where it was built for (an .onnx "
                              "builds for the CPU). Every group of a model must have the same kind."),
    "instance_group[].gpus": ("array, only `[0]`", "-",
                              "With `KIND_GPU`: the server runs on GPU 0 of its process; choose the device with "
                              "`CUDA_VISIBLE_DEVICES`."),
    "tailcut": ("object", "-", "tailcut's own build and run options for the model."),
    "tailcut.engine_threads": ("integer", "0 (the CPU budget / instances)",
                               "Threads each instance's context runs with."),
    "tailcut.precision": ("`\"fp32\"`, `\"fp16\"`, `\"bf16\"` or `\"int8\"`", "`\"fp32\"`",
                          "How `model.onnx` is built: lower-precision layers where they are faster (`tailcut "
                          "build --fp16`, `--bf16`, `--int8`). A prebuilt `model.plan` keeps the precision it was "
                          "built with."),
    "tailcut.calibration_cache": ("string", "-",
                                  "With `\"precision\": \"int8\"` (required then): the file name of the "
                                  "calibration cache (`tailcut calibrate`) in the version folder, next to "
                                  "`model.onnx`; a plain name, no path."),
    "tailcut.int8_reduce_range": ("boolean", "false",
                                  "With `\"precision\": \"int8\"`: 7-bit weights where faster "
                                  "(`--int8-reduce-range`)."),
    "tailcut.tactics": ("`\"tuned\"` or `\"fixed\"`", "`\"tuned\"`",
                        "`\"fixed\"` builds `model.onnx` without timing tactics (`--tactics-fixed`): a quicker "
                        "start, a possibly slower engine."),
}
