#!/usr/bin/env python3
"""Pretrain a GPT-2 base model for Baton in plain PyTorch (stdlib + torch only).

Runs on the GPU machine (torch 2.x, CUDA, bf16 autocast) and, at toy size, on a CPU
(torch >= 1.13). Reads the token data that tools/gpu/prepare_data.sh (one training
array) or tools/gpu/prepare_library.sh (the library in parts) wrote and writes a
Hugging Face GPT-2 folder that `baton-cli` loads as a plain baseline model.

Library data arrives in parts over several calls (README.md, "The library, over two
calls"): every part present is checked against meta.json (sha256 of the compressed file
and of the ids) and trained on; an absent part is listed and skipped. With --state DIR the run
continues across calls: each call resumes from DIR (weights, AdamW moments, step, the
learning-rate plan, the best weights so far) and writes it back before its deadline;
--plan-minutes is then the training time of all calls together, over which the
cosine schedule is planned at the first call's measured speed.

  python3 tools/gpu/pretrain.py --data gpu-carry/data --out OUT --minutes 7 \
      [--layers 8 --heads 8 --embd 512 --positions 512 --window 512 --batch 64 ...]

--minutes is a hard wall-clock budget for the whole script, final writes included:
the number of steps is planned from the speed of the first steps (or --max-steps,
whichever is smaller), with linear warm-up then cosine decay over the planned steps.
Training windows of --window + 1 tokens are sampled uniformly inside documents (never
across a boundary); bf16 autocast and TF32 on CUDA, F.scaled_dot_product_attention
where torch has it (manual attention otherwise, or if the first step fails);
validation scores fixed disjoint windows of the validation book; the best checkpoint by
validation loss is kept in memory (early stopping with --patience validations).

Writes:
  OUT/model/      config.json, model.safetensors (HF names, Conv1D [in, out], no
                  lm_head: tied to wte), tokenizer.model; no baton.json (Baton reads
                  one as a recurrent checkpoint; the tokenizer identity is in summary.json)
  OUT/parts/      model.safetensors.partNN (<= --part-mib MiB each) and SHA256SUMS
                  (every part and the whole file); --parts-only then deletes
                  OUT/model/model.safetensors (tools/gpu/after.sh reassembles it)
  OUT/curve.json  mean validation NLL by window position (best model, as saved)
  OUT/log.jsonl   one line per log point / validation
  OUT/summary.json
"""
import time

T_START = time.time()

import argparse
import contextlib
import hashlib
import json
import lzma
import math
import os
import shutil
import sys

import torch
import torch.nn.functional as F

from gpt2_model import GPT2, USE_SDPA  # noqa: E402 (beside this script)
from hf_files import read_safetensors, sha256_file, write_safetensors  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a = p.add_argument
    a("--data", required=True, help="folder written by prepare_data.sh")
    a("--out", required=True)
    a("--minutes", type=float, required=True, help="hard wall-clock budget, final writes included")
    a("--layers", type=int, default=8)
    a("--heads", type=int, default=8)
    a("--embd", type=int, default=512)
    a("--positions", type=int, default=512)
    a("--window", type=int, default=512)
    a("--dropout", type=float, default=0.1)
    a("--batch", type=int, default=64)
    a("--lr", type=float, default=6e-4)
    a("--min-lr-ratio", type=float, default=0.1)
    a("--warmup", type=int, default=200)
    a("--weight-decay", type=float, default=0.1)
    a("--beta2", type=float, default=0.95)
    a("--clip", type=float, default=1.0)
    a("--seed", type=int, default=1)
    a("--val-every", type=int, default=200, help="steps between validations")
    a("--val-tokens", type=int, default=0, help="validation tokens per validation (0: the whole book)")
    a("--patience", type=int, default=0, help="stop after N validations without improvement (0: never)")
    a("--log-every", type=int, default=50, help="steps between log.jsonl lines")
    a("--device", default="auto", choices=["auto", "cpu", "cuda"])
    a("--max-steps", type=int, default=0, help="0: as many as the time budget allows")
    a("--calibrate-steps", type=int, default=20, help="steps timed before the plan is made")
    a("--reserve-seconds", type=float, default=0, help="time kept for the final writes (0: estimated)")
    a("--save-dtype", default="f16", choices=["f16", "f32"])
    a("--part-mib", type=float, default=15)
    a("--parts-only", action="store_true", help="delete OUT/model/model.safetensors after splitting")
    a("--threads", type=int, default=0, help="CPU threads (0: torch default)")
    a("--state", default="", help="folder that carries the run from one call to the next")
    a("--plan-minutes", type=float, default=0,
      help="with --state: training minutes of all calls together (0: --minutes)")
    return p.parse_args()


# ---------------------------------------------------------------- data

def read_checked(data, entry):
    """The ids of one meta.json entry, both sha256 sums checked, or exit with the reason."""
    path = os.path.join(data, entry["file"])
    xz = open(path, "rb").read()
    if "xz_sha256" in entry and hashlib.sha256(xz).hexdigest() != entry["xz_sha256"]:
        sys.exit(f"error: {entry['file']}: the compressed file's sha256 differs (damaged in transit?)")
    raw = lzma.decompress(xz)
    if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
        sys.exit(f"error: {entry['file']}: sha256 mismatch")
    if len(raw) != 2 * entry["tokens"]:
        sys.exit(f"error: {entry['file']}: {len(raw)} bytes, expected {2 * entry['tokens']}")
    if sys.byteorder != "little":
        sys.exit("error: little-endian machine required")
    return torch.frombuffer(bytearray(raw), dtype=torch.int16).to(torch.int64) & 0xFFFF


def load_tokens(data, meta, key):
    return read_checked(data, meta[key])


def load_train(data, meta):
    """The training ids, their documents (offsets into them) and the part files used.
    Format 1: one array. Format 2: every part present, in order, concatenated."""
    if meta.get("format_version", 1) < 2:
        return load_tokens(data, meta, "train"), meta["train"]["docs"], ["train"]
    arrays, docs, used, missing, offset = [], [], [], [], 0
    for part in meta["parts"]:
        if not os.path.exists(os.path.join(data, part["file"])):
            missing.append(part["file"])
            continue
        arrays.append(read_checked(data, part))
        docs += [dict(d, offset=d["offset"] + offset) for d in part["docs"]]
        offset += part["tokens"]
        used.append(part["file"])
    if not arrays:
        sys.exit(f"error: no part of the training data is in {data}")
    if missing:
        print(f"{len(used)} of {len(meta['parts'])} parts present; absent: {', '.join(missing)}", flush=True)
    return torch.cat(arrays), docs, used


class WindowSampler:
    """Uniform over every start s with s .. s+T inside one document."""

    def __init__(self, docs, window, device, seed):
        offs, counts = [], []
        for d in docs:
            n = d["length"] - window  # starts 0 .. length-window-1 need window+1 tokens
            if n > 0:
                offs.append(d["offset"])
                counts.append(n)
        if not counts:
            sys.exit(f"error: no training document has {window + 1} tokens")
        self.offs = torch.tensor(offs, dtype=torch.int64, device=device)
        self.cum = torch.cumsum(torch.tensor(counts, dtype=torch.int64), 0).to(device)
        self.total = int(self.cum[-1])
        self.prev = torch.cat([torch.zeros(1, dtype=torch.int64, device=device), self.cum[:-1]])
        self.gen = torch.Generator(device=device)
        self.gen.manual_seed(seed)
        self.device = device
        self.ar = torch.arange(window + 1, device=device)

    def batch(self, tokens, b):
        u = torch.randint(0, self.total, (b,), generator=self.gen, device=self.device)
        d = torch.searchsorted(self.cum, u, right=True)
        starts = self.offs[d] + (u - self.prev[d])
        w = tokens[starts[:, None] + self.ar]
        return w[:, :-1], w[:, 1:]


def val_windows(tokens, docs, window, limit):
    """Disjoint windows from each document's start (as `baton-cli eval --overlap 0`),
    full windows only, up to `limit` scored tokens (0: all)."""
    xs = []
    for d in docs:
        s = d["offset"]
        while s + window + 1 <= d["offset"] + d["length"]:
            xs.append(tokens[s:s + window + 1])
            s += window
            if limit and len(xs) * window >= limit:
                break
        if limit and len(xs) * window >= limit:
            break
    if not xs:
        sys.exit(f"error: the validation data has no full window of {window} tokens")
    return torch.stack(xs)



# ---------------------------------------------------------------- state across calls

SHAPE_KEYS = ("layers", "heads", "embd", "positions", "window", "batch", "seed")


def load_state(folder, args):
    """The run's state from an earlier call, checked, or None when this is the first call.
    state.json is written last and names the tensors file's sha256: a call stopped while
    writing leaves the previous state whole."""
    path = os.path.join(folder, "state.json")
    if not os.path.exists(path):
        return None
    st = json.load(open(path))
    tensors = os.path.join(folder, st["tensors"])
    if sha256_file(tensors) != st["tensors_sha256"]:
        sys.exit(f"error: {tensors}: sha256 differs from state.json (delete {folder} to start afresh)")
    for k in SHAPE_KEYS:
        if st["args"][k] != getattr(args, k):
            sys.exit(f"error: --{k} {getattr(args, k)} differs from the run in {folder} "
                     f"({st['args'][k]}); delete the folder to start afresh")
    st["weights"] = read_safetensors(tensors)
    return st


def restore(model, opt, st, device):
    w = st["weights"]
    model.load_state_dict({n: w["model." + n] for n, _ in model.named_parameters()})
    sd = opt.state_dict()
    params = [p for g in opt.param_groups for p in g["params"]]
    for i, _ in enumerate(params):
        if f"adam.{i}.exp_avg" in w:
            sd["state"][i] = {"step": torch.tensor(float(st["adam_step"])),
                              "exp_avg": w[f"adam.{i}.exp_avg"].to(device),
                              "exp_avg_sq": w[f"adam.{i}.exp_avg_sq"].to(device)}
    opt.load_state_dict(sd)


def save_state(folder, model, opt, best_state, scalars):
    os.makedirs(folder, exist_ok=True)
    named = [("model." + n, p) for n, p in model.named_parameters()]
    named += [("best." + n, t) for n, t in best_state.items()]
    adam_step = 0
    for i, p in enumerate(p for g in opt.param_groups for p in g["params"]):
        st = opt.state.get(p)
        if st:
            named += [(f"adam.{i}.exp_avg", st["exp_avg"]), (f"adam.{i}.exp_avg_sq", st["exp_avg_sq"])]
            adam_step = int(float(st["step"]))
    name = "state-%d-%d.safetensors" % (scalars["step"], time.time_ns())  # never the one in use
    write_safetensors(os.path.join(folder, name), named, torch.float32)
    meta = dict(scalars, tensors=name, tensors_sha256=sha256_file(os.path.join(folder, name)),
                adam_step=adam_step)
    tmp = os.path.join(folder, "state.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, os.path.join(folder, "state.json"))
    for old in os.listdir(folder):  # the previous call's tensors
        if old.startswith("state-") and old != name:
            os.remove(os.path.join(folder, old))


# ---------------------------------------------------------------- main

def main():
    args = parse_args()
    budget = args.minutes * 60.0
    deadline = T_START + budget
    out = args.out
    os.makedirs(out, exist_ok=True)
    meta = json.load(open(os.path.join(args.data, "meta.json")))
    vocab = int(meta["vocab_size"])
    if args.window > args.positions:
        sys.exit("error: --window exceeds --positions")
    if args.embd % args.heads:
        sys.exit("error: --embd must be a multiple of --heads")

    dev = args.device
    if dev == "auto":
        dev = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(dev)
    cuda = device.type == "cuda"
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.set_float32_matmul_precision("high")  # TF32 allowed on CUDA
    torch.manual_seed(args.seed)
    dev_name = torch.cuda.get_device_name(device) if cuda else "cpu (%d threads)" % torch.get_num_threads()

    train, train_docs, parts_used = load_train(args.data, meta)
    train = train.to(device)
    val = load_tokens(args.data, meta, "val").to(device)
    if int(train.max()) >= vocab or int(val.max()) >= vocab:
        sys.exit("error: token id >= vocab_size")
    T, B = args.window, args.batch
    state_dir = args.state
    resumed = load_state(state_dir, args) if state_dir else None
    # A resumed call draws other windows than the call before it (and its data may have grown).
    sampler = WindowSampler(train_docs, T, device, args.seed + 1000003 * (resumed["step"] if resumed else 0))
    vwin = val_windows(val, meta["val"]["docs"], T, args.val_tokens)
    cwin = val_windows(val, meta["val"]["docs"], T, 0)  # the whole book, for the curve

    model = GPT2(vocab, args.positions, args.embd, args.layers, args.heads, args.dropout).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": args.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    def make_opt(fused):
        if fused:
            try:
                return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, args.beta2), fused=True)
            except (TypeError, RuntimeError, ValueError):
                pass
        return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, args.beta2))
    opt = make_opt(cuda)
    if resumed:
        restore(model, opt, resumed, device)

    def autocast():
        if cuda:
            return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    @torch.no_grad()
    def per_position_nll(windows, bs=32 if cuda else 8, fast=True, per_window=None):
        """Sum of NLL by position and window count, over `windows` [N, T+1]; bf16 on
        CUDA when `fast`, else float32 (TF32 matmuls); appends each window's mean NLL to
        `per_window` when given."""
        model.eval()
        tot = torch.zeros(T, dtype=torch.float64, device=device)
        for i in range(0, windows.size(0), bs):
            w = windows[i:i + bs]
            with autocast() if fast else contextlib.nullcontext():
                logits = model(w[:, :-1])
            nll = F.cross_entropy(logits.float().reshape(-1, vocab), w[:, 1:].reshape(-1),
                                  reduction="none").view(w.size(0), T)
            tot += nll.sum(0).double()
            if per_window is not None:
                per_window.extend(nll.double().mean(1).tolist())
        model.train()
        return tot, windows.size(0)

    def validate():
        tot, n = per_position_nll(vwin)
        return float(tot.sum()) / (n * T)

    log = open(os.path.join(out, "log.jsonl"), "w")

    def emit(rec, echo=False):
        rec["elapsed"] = round(time.time() - T_START, 2)
        log.write(json.dumps(rec) + "\n")
        log.flush()
        if echo:
            print(" ".join(f"{k}={v}" for k, v in rec.items()), flush=True)

    print(f"device {dev_name}, torch {torch.__version__}, sdpa {USE_SDPA[0]}; params {n_params / 1e6:.2f} M; "
          f"train {train.numel()} tokens on the device ({len(parts_used)} part(s)), "
          f"val windows {vwin.size(0)} x {T}", flush=True)
    if resumed:
        new = [p for p in parts_used if p not in resumed["parts"]]
        print(f"resumed at step {resumed['step']} of {resumed['planned']} ({resumed['tokens_seen'] / 1e6:.1f} M tokens "
              f"trained, best validation {resumed['best_val']:.4f} at step {resumed['best_step']}); "
              f"parts new since then: {', '.join(new) or 'none'}", flush=True)

    # Initial validation (the first one also pays for warm-up, so later ones are timed
    # again for the plan).
    try:
        per_position_nll(vwin[:2])  # warm-up, untimed
    except Exception as e:  # noqa: BLE001
        if not USE_SDPA[0]:
            raise
        print(f"warning: attention failed ({type(e).__name__}: {str(e)[:200]}); using manual attention", flush=True)
        USE_SDPA[0] = False
        per_position_nll(vwin[:2])
    tv = time.time()
    best_val = validate()
    val_seconds = time.time() - tv
    snapshot = lambda: {k: t.detach().to("cpu", copy=True) for k, t in model.state_dict().items()}
    best_step, best_state, bad_vals = 0, snapshot(), 0
    step0 = resumed["step"] if resumed else 0
    emit({"step": step0, "val_loss": round(best_val, 4), "val_seconds": round(val_seconds, 2)}, echo=True)
    if resumed:  # the best weights of the calls before
        best_val, best_step, bad_vals = resumed["best_val"], resumed["best_step"], resumed["bad_vals"]
        best_state = {n[5:]: t for n, t in resumed["weights"].items() if n.startswith("best.")}
    curve_factor = cwin.size(0) / max(1, vwin.size(0))

    def reserve_for(vs):  # the end: last validation, the curve (whole book), writes, split
        if args.reserve_seconds:
            return args.reserve_seconds
        return 10.0 + 1.25 * vs * (1 + curve_factor) + n_params * (4e-7 + (1.6e-7 if state_dir else 0))

    max_steps = args.max_steps if args.max_steps > 0 else None
    planned = max_steps
    warmup = args.warmup if not max_steps else min(args.warmup, max(1, max_steps // 10))
    # Several calls: the plan covers --plan-minutes of training, made once in the first call.
    several = bool(state_dir) and args.plan_minutes > 0
    plan_end = T_START + 60 * args.plan_minutes if several else deadline

    def plan(step, step_seconds, vs):
        """Steps that fit before the deadline at the measured speeds (capped by --max-steps)."""
        left = plan_end - reserve_for(vs) - time.time()
        per_step = step_seconds + vs / max(1, args.val_every)
        n = step + max(1, int(0.97 * left / per_step))
        return min(n, max_steps) if max_steps else n

    # Cosine progress runs from `anchor` (step, progress) to 1 at `planned`; a re-plan
    # moves the anchor to the current step, so the learning rate never jumps back up.
    anchor = [warmup, 0.0]
    if resumed:
        planned, warmup, anchor = resumed["planned"], resumed["warmup"], resumed["anchor"]

    def progress(step):
        if planned is None or step <= anchor[0]:
            return anchor[1] if step > warmup else 0.0
        f = (step - anchor[0]) / max(1, planned - anchor[0])
        return min(1.0, anchor[1] + (1 - anchor[1]) * f)

    def lr_at(step):  # step is 1-based
        if step <= warmup:
            return args.lr * step / warmup
        if planned is None:
            return args.lr
        prog = progress(step)
        return args.lr * (args.min_lr_ratio + (1 - args.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * prog)))

    def sync():
        if cuda:
            torch.cuda.synchronize()

    model.train()
    step, tokens_seen, stop, n_vals = step0, resumed["tokens_seen"] if resumed else 0, "planned steps done", 0
    cal_from = 3                      # steps 1-3 are warm-up, not timed
    timed_seconds, timed_steps = 0.0, 0
    step_seconds, t_seg, seg_step = None, None, 0  # t_seg: start of the current timed run
    t_last, tok_last, loss_acc, loss_n = time.time(), tokens_seen, 0.0, 0

    def train_step(x, y):
        with autocast():
            logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if args.clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        return loss

    def close_segment():  # adds the steps since t_seg to the timed ones
        nonlocal timed_seconds, timed_steps, t_seg, seg_step
        sync()
        now = time.time()
        if t_seg is not None:
            timed_seconds += now - t_seg
            timed_steps += step - seg_step
        t_seg, seg_step = now, step

    while True:
        if planned is not None and step >= planned:
            break
        now = time.time()
        if now + 1.5 * (step_seconds or 0) + reserve_for(val_seconds) > deadline:
            stop = "time budget"
            break
        step += 1
        lr = lr_at(step)
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = sampler.batch(train, B)
        if step == step0 + 1:  # the first step falls back to manual attention / plain AdamW on failure
            try:
                loss = train_step(x, y)
                sync()
            except Exception as e:  # noqa: BLE001
                print(f"warning: first step failed ({type(e).__name__}: {str(e)[:200]}); "
                      "retrying with manual attention and non-fused AdamW", flush=True)
                USE_SDPA[0] = False
                opt = make_opt(False)
                for g in opt.param_groups:
                    g["lr"] = lr
                loss = train_step(x, y)
        else:
            loss = train_step(x, y)
        tokens_seen += B * T
        if step % 10 == 0 or step <= step0 + 3:  # float() waits for the device: not every step
            loss_acc += float(loss)
            loss_n += 1

        if step - step0 == cal_from:
            close_segment()
        elif step_seconds is None and step - step0 == cal_from + args.calibrate_steps:
            close_segment()
            step_seconds = timed_seconds / timed_steps
            if not resumed:  # a resumed run keeps the plan of its first call
                planned = plan(step, step_seconds, val_seconds)
            if warmup > step and not resumed:
                warmup = min(warmup, max(step + 1, planned // 10))
                anchor = [warmup, 0.0]
            emit({"step": step, "plan": planned, "warmup": warmup, "step_seconds": round(step_seconds, 4),
                  "tokens_per_second": round(B * T / step_seconds),
                  "reserve_seconds": round(reserve_for(val_seconds), 1)}, echo=True)

        if step % args.log_every == 0 or step == planned:
            dt = time.time() - t_last
            emit({"step": step, "train_loss": round(loss_acc / max(1, loss_n), 4), "lr": float(f"{lr:.3g}"),
                  "tokens": tokens_seen, "tokens_per_second": round((tokens_seen - tok_last) / max(dt, 1e-9))})
            t_last, tok_last, loss_acc, loss_n = time.time(), tokens_seen, 0.0, 0

        if step % args.val_every == 0 or step == planned:
            if step - step0 > cal_from:
                close_segment()
            tv = time.time()
            v = validate()
            val_seconds = time.time() - tv
            improved = v < best_val
            if improved:
                best_val, best_step, bad_vals = v, step, 0
                best_state = snapshot()
            else:
                bad_vals += 1
            rec = {"step": step, "val_loss": round(v, 4), "best": round(best_val, 4), "best_step": best_step,
                   "epochs": round(tokens_seen / train.numel(), 2)}
            if step_seconds is not None and step != planned and not several:  # re-plan at the measured speeds
                step_seconds = timed_seconds / max(1, timed_steps)
                if step > warmup:
                    anchor = [step, progress(step)]
                planned = max(step + 1, plan(step, step_seconds, val_seconds))
                rec["plan"] = planned
            n_vals += 1  # print about 30 validations at most (the remote output tail is short)
            stride = max(1, math.ceil((planned or 0) / max(1, args.val_every) / 30))
            emit(rec, echo=n_vals % stride == 0 or step == planned)
            if t_seg is not None:
                t_seg = time.time()
            if args.patience and bad_vals >= args.patience:
                stop = f"early stop (patience {args.patience})"
                break

    # A final validation when the loop stopped between validations.
    if step > step0 and step % args.val_every and step != planned:
        v = validate()
        if v < best_val:
            best_val, best_step, bad_vals = v, step, 0
            best_state = snapshot()
        emit({"step": step, "val_loss": round(v, 4), "best": round(best_val, 4), "best_step": best_step}, echo=True)
    if state_dir:  # the next call continues from here
        ts = time.time()
        save_state(state_dir, model, opt, best_state, {
            "step": step, "planned": planned, "warmup": warmup, "anchor": anchor,
            "tokens_seen": tokens_seen, "best_val": best_val, "best_step": best_step, "bad_vals": bad_vals,
            "parts": sorted(set(parts_used) | set(resumed["parts"] if resumed else [])),
            "args": {k: getattr(args, k) for k in SHAPE_KEYS}})
        emit({"step": step, "state_saved": state_dir, "state_seconds": round(time.time() - ts, 2)}, echo=True)
    train_seconds = time.time() - T_START
    model.load_state_dict(best_state)

    # ---- write the model
    save_dtype = torch.float16 if args.save_dtype == "f16" else torch.float32
    mdir = os.path.join(out, "model")
    os.makedirs(mdir, exist_ok=True)
    named = [(n, p) for n, p in model.named_parameters()]
    expect = ["wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"]
    assert all(n in dict(named) for n in expect)
    with torch.no_grad():  # evaluate exactly what is shipped: weights rounded to the saved dtype
        for _, p in named:
            p.copy_(p.to(save_dtype).to(p.dtype))
    st_path = os.path.join(mdir, "model.safetensors")
    write_safetensors(st_path, named, save_dtype)
    back = read_safetensors(st_path)
    for n, p in named:
        if not torch.equal(back[n].float(), p.detach().cpu().float()):
            sys.exit(f"error: safetensors round trip differs for {n}")
    config = {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": vocab,
        "n_positions": args.positions, "n_ctx": args.positions, "n_embd": args.embd,
        "n_layer": args.layers, "n_head": args.heads, "n_inner": None,
        "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05,
        "resid_pdrop": args.dropout, "embd_pdrop": args.dropout, "attn_pdrop": args.dropout,
        "initializer_range": 0.02,
        "bos_token_id": meta.get("bos_token_id", 1), "eos_token_id": meta.get("eos_token_id", 1),
        "tie_word_embeddings": True, "torch_dtype": "float16" if args.save_dtype == "f16" else "float32",
    }
    with open(os.path.join(mdir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    shutil.copyfile(os.path.join(args.data, meta.get("tokenizer", "tokenizer.model")),
                    os.path.join(mdir, "tokenizer.model"))

    # ---- curve on the whole validation book (disjoint windows from its start, as
    # `baton-cli eval --overlap 0`), best model as saved, float32
    tc = time.time()
    torch.set_float32_matmul_precision("highest")
    per_window = []
    tot, n = per_position_nll(cwin, fast=False, per_window=per_window)
    curve = (tot / n).tolist()
    bands = {}
    for a, b in ((0, 15), (16, 31), (32, 63), (64, 127), (128, 255), (256, 511), (512, 1023)):
        if b < T:
            bands[f"{a}-{b}"] = sum(curve[a:b + 1]) / (b - a + 1)
    json.dump({"window": T, "windows": n, "tokens": n * T, "book": meta["val"]["docs"][0]["name"],
               "mean_nll": float(tot.sum()) / (n * T), "bands": bands,
               "band_256_511_minus_32_63": (bands["256-511"] - bands["32-63"]) if "256-511" in bands else None,
               "nll_by_position": [round(v, 5) for v in curve],
               "nll_by_window": [round(v, 5) for v in per_window]},
              open(os.path.join(out, "curve.json"), "w"), indent=1)
    curve_seconds = time.time() - tc

    # ---- split into parts
    pdir = os.path.join(out, "parts")
    shutil.rmtree(pdir, ignore_errors=True)
    os.makedirs(pdir)
    part_bytes = int(args.part_mib * 1024 * 1024)
    sums = []
    with open(st_path, "rb") as f:
        i = 0
        while True:
            chunk = f.read(part_bytes)
            if not chunk:
                break
            name = "model.safetensors.part%02d" % i
            open(os.path.join(pdir, name), "wb").write(chunk)
            sums.append((hashlib.sha256(chunk).hexdigest(), name))
            i += 1
    whole_sha = sha256_file(st_path)
    sums.append((whole_sha, "model.safetensors"))
    with open(os.path.join(pdir, "SHA256SUMS"), "w") as f:
        for h, name in sums:
            f.write(f"{h}  {name}\n")
    st_bytes = os.path.getsize(st_path)
    if args.parts_only:
        os.remove(st_path)

    summary = {
        "best_step": best_step, "best_val_loss": round(best_val, 5), "best_val_ppl": round(math.exp(best_val), 3),
        "steps": step, "planned_steps": planned, "stop": stop, "params": n_params,
        "tokens_seen": tokens_seen, "epochs": round(tokens_seen / train.numel(), 3),
        "tokens_per_second": round(B * T / step_seconds) if step_seconds else None,
        "step_seconds": step_seconds, "val_seconds": round(val_seconds, 2), "curve_seconds": round(curve_seconds, 2),
        "train_minutes": round(train_seconds / 60, 3), "minutes": round((time.time() - T_START) / 60, 3),
        "budget_minutes": args.minutes, "device": dev_name, "torch": torch.__version__,
        "sdpa": USE_SDPA[0], "curve_bands": bands, "model_bytes": st_bytes, "model_sha256": whole_sha,
        "parts": len(sums) - 1, "tokenizer_identity": meta.get("tokenizer_identity"),
        "data_parts": parts_used, "distinct_tokens": train.numel(), "call_first_step": step0 + 1,
        "args": vars(args),
    }
    json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
    emit({"done": True, "best_step": best_step, "best_val_loss": round(best_val, 4)})
    print(f"done: best step {best_step}/{step} (planned {planned}, {stop}), val {best_val:.4f} "
          f"(ppl {math.exp(best_val):.2f}), bands " + ", ".join(f"{k} {v:.3f}" for k, v in bands.items()) +
          f"; {tokens_seen / 1e6:.1f} M tokens ({tokens_seen / train.numel():.1f} epochs); "
          f"{(time.time() - T_START) / 60:.2f} of {args.minutes} min; model {st_bytes / 2**20:.1f} MiB "
          f"in {len(sums) - 1} parts", flush=True)
    if time.time() > deadline:
        print(f"warning: over the budget by {time.time() - deadline:.1f} s", flush=True)


if __name__ == "__main__":
    main()
