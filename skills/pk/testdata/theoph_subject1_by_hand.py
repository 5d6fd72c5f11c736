# Prints theoph_subject1_by_hand.txt: the NCA of theophylline subject 1 worked step by step.
# Run from this directory: python3 theoph_subject1_by_hand.py
from math import log, exp
t=[0,0.25,0.57,1.12,2.02,3.82,5.1,7.03,9.05,12.12,24.37]
c=[0.74,2.84,6.57,10.5,9.66,8.58,8.36,7.47,6.89,5.94,3.28]
D=320
out=[]
P=out.append
P("# Theophylline subject 1, dose 320 mg, extravascular: NCA worked by hand.")
P("#")
P("# Independent of the Go code under test: every line below is arithmetic on the")
P("# data of testdata/theoph.csv (subject 1), written out so a reader can check it")
P("# with a calculator. The lines were printed by theoph_subject1_by_hand.py (Python 3")
P("# float arithmetic, math.log/exp; 10 significant digits), which shares no code")
P("# with the package; the linear AUC sum, the last log trapezoid, AUCinf(obs) and")
P("# CL/F (linear) were re-done with bc -l and agree to every printed digit.")
P("# Lines starting 'expect' are read by TestTheophSubject1ByHand; all other lines")
P("# are the working. Units: h, mg/L, mg; AUC mg.h/L, AUMC mg.h2/L.")
P("#")
P("# Data (t h, C mg/L): " + ", ".join(f"({a}, {b})" for a,b in zip(t,c)))
P("# C(0) = 0.74 is observed (non-zero at t = 0): integration starts there.")
P("# Cmax = 10.5 at Tmax = 1.12 (largest C); Clast = 3.28 at Tlast = 24.37 (last C > 0).")
P("")
for name,v in [("cmax",10.5),("tmax",1.12),("clast",3.28),("tlast",24.37)]:
    P(f"expect both {name} {v}")
P("")
def g(x): return f"{x:.10g}"
for method in ["linear","linear_up_log_down"]:
    P(f"## AUC and AUMC, method {method}")
    if method=="linear":
        P("# every interval: AUC_i = dt*(c1+c2)/2 ; AUMC_i = dt*(t1*c1+t2*c2)/2")
    else:
        P("# rising or level (c2 >= c1): linear as above;")
        P("# falling (c2 < c1, both > 0): AUC_i = dt*(c1-c2)/ln(c1/c2) ;")
        P("#   AUMC_i = dt*(t1*c1-t2*c2)/ln(c1/c2) + dt^2*(c1-c2)/ln(c1/c2)^2")
    A=M=0
    for i in range(1,len(t)):
        t1,t2,c1,c2=t[i-1],t[i],c[i-1],c[i]
        dt=t2-t1
        if method=="linear_up_log_down" and c2<c1 and c2>0:
            L=log(c1/c2)
            a=dt*(c1-c2)/L
            m=dt*(t1*c1-t2*c2)/L+dt*dt*(c1-c2)/(L*L)
            P(f"[{t1}, {t2}] log  dt={g(dt)} ln({c1}/{c2})={g(L)}  AUC={g(dt)}*{g(c1-c2)}/{g(L)}={g(a)}  AUMC={g(dt)}*({g(t1*c1)}-{g(t2*c2)})/{g(L)}+{g(dt*dt)}*{g(c1-c2)}/{g(L*L)}={g(m)}")
        else:
            a=dt*(c1+c2)/2
            m=dt*(t1*c1+t2*c2)/2
            P(f"[{t1}, {t2}] lin  dt={g(dt)}  AUC={g(dt)}*({c1}+{c2})/2={g(a)}  AUMC={g(dt)}*({g(t1*c1)}+{g(t2*c2)})/2={g(m)}")
        A+=a; M+=m
    P(f"sum: AUClast = {g(A)} ; AUMClast = {g(M)} ; AUCall = AUClast (the last sample is the last positive one)")
    P(f"expect {method} auclast {g(A)}")
    P(f"expect {method} aucall {g(A)}")
    P(f"expect {method} aumclast {g(M)}")
    P(f"expect {method} mrtlast {g(M/A)}")
    P("")
    if method=="linear": AL,ML=A,M
    else: AU,MU=A,M
P("## lambda_z: log-linear least squares on the last n positive samples after Tmax")
P("# candidates after Tmax = 1.12: t = 2.02 ... 24.37 (7 samples)")
P("# for each n: xbar, ybar (y = ln C), Sxx = sum (x-xbar)^2, Sxy = sum (x-xbar)(y-ybar), Syy;")
P("# slope = Sxy/Sxx, R2 = Sxy^2/(Sxx*Syy), adjR2 = 1-(1-R2)*(n-1)/(n-2)")
ct=t[4:]; cc=c[4:]
fits=[]
for n in range(3,len(ct)+1):
    x=ct[-n:]; y=[log(v) for v in cc[-n:]]
    xb=sum(x)/n; yb=sum(y)/n
    sxx=sum((a-xb)**2 for a in x); sxy=sum((a-xb)*(b-yb) for a,b in zip(x,y)); syy=sum((b-yb)**2 for b in y)
    s=sxy/sxx; r2=sxy*sxy/(sxx*syy); ar=1-(1-r2)*(n-1)/(n-2)
    fits.append((n,s,yb-s*xb,r2,ar,x))
    P(f"n={n} t={x[0]}..{x[-1]}: xbar={g(xb)} ybar={g(yb)} Sxx={g(sxx)} Sxy={g(sxy)} Syy={g(syy)} slope={g(s)} R2={g(r2)} adjR2={g(ar)}")
best=max(f[4] for f in fits)
sel=max((f for f in fits if f[4]>=best-1e-4), key=lambda f:f[0])
n,s,ic,r2,ar,x=sel
P(f"# highest adjR2 = {g(best)}; fits within 1e-4 of it: n = {[f[0] for f in fits if f[4]>=best-1e-4]}; the most points wins: n = {n}")
lz=-s; hl=log(2)/lz
P(f"lambda_z = -slope = {g(lz)} /h ; intercept = ybar - slope*xbar = {g(ic)} ; t1/2 = ln2/lambda_z = 0.6931471806/{g(lz)} = {g(hl)} h")
P(f"span = ({x[-1]} - {x[0]})/t1/2 = {g((x[-1]-x[0])/hl)}")
P(f"expect both lambdaz {g(lz)}")
P(f"expect both lambdazn {n}")
P(f"expect both r2 {g(r2)}")
P(f"expect both adjr2 {g(ar)}")
P(f"expect both halflife {g(hl)}")
P(f"expect both span {g((x[-1]-x[0])/hl)}")
cp=exp(ic-lz*24.37)
P(f"Clast_pred = exp({g(ic)} - {g(lz)}*24.37) = {g(cp)}")
P(f"expect both clastpred {g(cp)}")
P("")
for method,A,M in [("linear",AL,ML),("linear_up_log_down",AU,MU)]:
    P(f"## extrapolated, method {method}")
    for kind,cl in [("obs",3.28),("pred",cp)]:
        ai=A+cl/lz; mi=M+cl*24.37/lz+cl/lz**2
        P(f"{kind}: AUCinf = {g(A)} + {g(cl)}/{g(lz)} = {g(ai)} ; %extrap = 100*({g(ai)}-{g(A)})/{g(ai)} = {g(100*(ai-A)/ai)}")
        P(f"{kind}: AUMCinf = {g(M)} + {g(cl)}*24.37/{g(lz)} + {g(cl)}/{g(lz)}^2 = {g(mi)} ; MRTinf = {g(mi)}/{g(ai)} = {g(mi/ai)}")
        P(f"{kind}: CL/F = 320/{g(ai)} = {g(D/ai)} L/h ; Vz/F = 320/({g(lz)}*{g(ai)}) = {g(D/(lz*ai))} L")
        for k,v in [("aucinf",ai),("aucpctextrap",100*(ai-A)/ai),("aumcinf",mi),("mrtinf",mi/ai),("cl",D/ai),("vz",D/(lz*ai))]:
            P(f"expect {method} {k}{kind} {g(v)}")
    P("")
open('theoph_subject1_by_hand.txt','w').write("\n".join(out)+"\n")
