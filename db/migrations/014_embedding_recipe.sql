-- How the corpus's vectors were made from the model's weights (issue 17 item 3): the pooling and
-- the query/passage prefixes a model directory's manifest (embed/model-recipe.ts) declares. One
-- weights file pooled or prefixed two ways gives vectors that must not be mixed, so the recipe is
-- part of the recorded identity and checked beside name, dimension and weights. Every corpus before
-- manifests was made by mean pooling without prefixes: 'mean'.
ALTER TABLE embedding_model ADD COLUMN IF NOT EXISTS recipe text NOT NULL DEFAULT 'mean';
