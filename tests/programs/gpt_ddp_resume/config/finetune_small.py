# small run that trains, checkpoints, then reloads the checkpoint for eval
import time

out_dir = 'out-small'
eval_interval = 8
eval_iters = 3
log_interval = 4
always_save_checkpoint = True

wandb_log = False
wandb_run_name = 'small-' + str(int(time.time()))

batch_size = 4
block_size = 24
gradient_accumulation_steps = 2

n_layer = 2
n_head = 4
n_embd = 48
dropout = 0.1

learning_rate = 1e-3
max_iters = 24
decay_lr = False
