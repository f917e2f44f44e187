#!/bin/bash
# one line per run: SICK recall / contradictions / AUROC, unperturbed, drop, class mean, DARR sample, demo person
cd ${O:-/work/data/s75/runs}  # O: another session's runs folder
for n in "$@"; do
  r=$(grep "two-way entailments read" $n.rt.log | grep -o "[0-9.]*%$")
  c=$(grep "contradictions read as NoContr" $n.rt.log | grep -o "[0-9.]*%$")
  a=$(grep "^P(NoContr)" $n.rt.log | head -1 | awk '{print $2}')
  u=$(grep "unperturbed bases read" $n.rt.log | awk '{print $6}')
  d=$(grep "^all " $n.rt.log | awk '{print $4, $8}')
  m=$(grep "^meaning " $n.rt.log | awk '{print $3}')
  k=$(grep "^P(NoContr)" $n.darr.log | awk '{print $2, $3, $4, $5}')
  e=$(grep "^entity" $n.demo | awk '{print $2, $3}')
  g=$(grep "^wmt17-good" $n.demo | awk '{printf "%s ", $2}')
  echo "$n | SICK $r / $c / $a | unpert $u | drop/class $d | meaning $m | DARR $k | person $e | good $g"
done
