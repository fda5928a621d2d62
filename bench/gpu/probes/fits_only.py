"""Deletes the fallback branches (the vector loop and the element loop for
rows that do not fit) from a generated persistent row kernel, leaving the
fits path as it was: a probe of what the fallback code costs the fits path
(session 11, run 6). Usage: fits_only.py GENERATED.cu OUT.cu; the result is
correct only at shapes whose rows fit."""
import sys

from probe_args import probe_args
src, dst = probe_args(2, __doc__)[:2]
s=open(src).read()
def drop(s, key, keep):
    out=[];i=0
    while True:
        k=s.find(key,i)
        if k<0: out.append(s[i:]);break
        out.append(s[i:k]); j=k+len(key); depth=1
        while depth>0:
            if s[j]=='{': depth+=1
            elif s[j]=='}': depth-=1
            j+=1
        out.append(keep); i=j
    return ''.join(out)
s=drop(s,'} else     if (vec_ok) {','}')
s=drop(s,'} else {\n      for (i64 jj = t; active','}')
open(dst,'w').write(s)
