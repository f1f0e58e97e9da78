"""DeepSpeed configs written out as JSON by launch.py before `deepspeed train.py`."""
import json
import sys

ZERO2 = {
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "gradient_clipping": 1.0,
    "fp16": {
        "enabled": True,  # may: precision
        "loss_scale": 0,
        "loss_scale_window": 1000,
        "initial_scale_power": 16,
        "hysteresis": 2,
        "min_loss_scale": 1,
    },
    "bf16": {"enabled": False},
    "zero_optimization": {
        "stage": 2,
        "overlap_comm": True,
        "contiguous_gradients": True,
        "reduce_bucket_size": 5e8,
        "allgather_bucket_size": 5e8,
    },
    "communication_data_type": "fp16",  # may: precision
    "wall_clock_breakdown": False,
}

ZERO3_OFFLOAD = {
    "train_micro_batch_size_per_gpu": "auto",
    "bf16": {"enabled": "auto"},  # may: precision
    "zero_optimization": {
        "stage": 3,
        "offload_optimizer": {"device": "cpu", "pin_memory": True},
        "offload_param": {"device": "cpu", "pin_memory": True},
        "stage3_gather_16bit_weights_on_model_save": True,
    },
    "aio": {"block_size": 1048576, "queue_depth": 8, "single_submit": False},
}

CONFIGS = {"zero2": ZERO2, "zero3_offload": ZERO3_OFFLOAD}


def write_config(name: str, path: str) -> None:
    with open(path, "w") as f:
        json.dump(CONFIGS[name], f, indent=2)


if __name__ == "__main__":
    write_config(sys.argv[1], sys.argv[2])
