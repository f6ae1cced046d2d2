print("pg-bench")
