"""The course: units of notebooks (``notebooks/course/``) that teach performance modelling of distributed training
on the workbench's own measurements and on the student's own machine.

- :mod:`perfkit.course.syllabus`: the units, in order, with their notebooks, times and check modules;
- :mod:`perfkit.course.exercises`: hands-on exercises checked in the notebook (:func:`~perfkit.course.exercises.check`),
  each wrong answer of a typical kind answered with its own hint;
- :mod:`perfkit.course.solutions`: the instructor's reference solutions and typical wrong answers
  (``notebooks/course/instructor/solutions/``), and the solution notebooks built from them;
- :mod:`perfkit.course.run`: executes the units headless (``make course``) into ``build/course/``;
- ``perfkit.course.uN_*``: what unit N computes and draws, and its exercises' checks.
"""
