# config for a very small multi-process run
# torchrun --standalone --nproc_per_node=2 train_gpt.py config/tiny_ddp.py
out_dir = 'out-tiny-ddp'
eval_interval = 6
eval_iters = 2
max_iters = 12
batch_size = 4
block_size = 16
n_layer = 1
n_head = 2
n_embd = 32
learning_rate = 2e-3
gradient_accumulation_steps = 2
