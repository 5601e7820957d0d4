target: ignored by .gitignore
