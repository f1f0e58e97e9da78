# train a miniature character-level model on synthetic "shakespeare-like" text
# good for debugging and playing on macbooks and such

out_dir = 'out-tiny-char'
eval_interval = 10  # keep frequent because we'll overfit
eval_iters = 4
log_interval = 2

# we expect to overfit on this small dataset, so only save when val improves
always_save_checkpoint = False

wandb_log = False  # override via command line if you like
wandb_project = 'tiny-char'
wandb_run_name = 'mini-gpt'

dataset = 'tiny_char'
gradient_accumulation_steps = 1
batch_size = 8
block_size = 32  # context of up to 32 previous characters

# baby GPT model :)
n_layer = 2
n_head = 2
n_embd = 32
dropout = 0.0

learning_rate = 3e-3  # with baby networks can afford to go a bit higher
max_iters = 30
lr_decay_iters = 30  # make equal to max_iters usually
min_lr = 3e-4  # learning_rate / 10 usually
beta2 = 0.99  # make a bit bigger because number of tokens per iter is small

warmup_iters = 5  # not super necessary potentially

# on macbook also add
# device = 'cpu'  # run on cpu only
# compile = False # do not torch compile the model
