"""`acdc bench startup`: a real `acdc serve` started again and again, on Django's source
(`startup_bench`) and on a huge repository of tiny files (`huge`)."""
